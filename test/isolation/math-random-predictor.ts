/**
 * Predicts V8's `Math.random` from earlier outputs of the same isolate: V8 fills a cache of 64 values
 * with xorshift128+ and hands them out last first, each value showing the top 52 bits of `state0`. The
 * generator is linear over GF(2), so a few outputs give the 128-bit state by Gaussian elimination. Used
 * by the sandbox audit to show whether one account can foresee another's random numbers.
 */

const MASK64 = (1n << 64n) - 1n;
const CACHE = 64;

/** The 52 mantissa bits of a value in [0, 1) made as V8 makes it ((state0 >> 12) | 1.0's exponent) - 1. */
function mantissa(value: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value + 1);
  return view.getBigUint64(0) & ((1n << 52n) - 1n);
}

function toDouble(state0: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, (state0 >> 12n) | 0x3ff0000000000000n);
  return view.getFloat64(0) - 1;
}

function xorshift(state: [bigint, bigint]): [bigint, bigint] {
  let s1 = state[0];
  const s0 = state[1];
  s1 ^= (s1 << 23n) & MASK64;
  s1 ^= s1 >> 17n;
  s1 ^= s0;
  s1 ^= s0 >> 26n;
  return [s0, s1];
}

/** The same step on bit masks over the 128 unknown bits (bit k of s0 is unknown k, of s1 unknown 64 + k). */
type Symbolic = bigint[];
const shl = (x: Symbolic, n: number): Symbolic => x.map((_, k) => (k - n >= 0 ? (x[k - n] as bigint) : 0n));
const shr = (x: Symbolic, n: number): Symbolic => x.map((_, k) => (k + n < 64 ? (x[k + n] as bigint) : 0n));
const xor = (a: Symbolic, b: Symbolic): Symbolic => a.map((v, k) => v ^ (b[k] as bigint));
function xorshiftSymbolic([state0, state1]: [Symbolic, Symbolic]): [Symbolic, Symbolic] {
  let s1 = state0;
  const s0 = state1;
  s1 = xor(s1, shl(s1, 23));
  s1 = xor(s1, shr(s1, 17));
  s1 = xor(s1, s0);
  s1 = xor(s1, shr(s0, 26));
  return [s0, s1];
}

/** Solves for the state before a block whose first `generated` values (in generation order) are known. */
function solve(generated: number[]): [bigint, bigint] | null {
  let state: [Symbolic, Symbolic] = [
    Array.from({ length: 64 }, (_, k) => 1n << BigInt(k)),
    Array.from({ length: 64 }, (_, k) => 1n << BigInt(64 + k)),
  ];
  const rows: Array<{ mask: bigint; value: bigint }> = [];
  for (const value of generated) {
    state = xorshiftSymbolic(state);
    const bits = mantissa(value);
    for (let j = 0; j < 52; j++)
      rows.push({ mask: state[0][j + 12] as bigint, value: (bits >> BigInt(j)) & 1n });
  }
  // Gaussian elimination over GF(2).
  const pivots: Array<{ bit: number; mask: bigint; value: bigint }> = [];
  for (const row of rows) {
    let { mask, value } = row;
    for (const p of pivots)
      if ((mask >> BigInt(p.bit)) & 1n) {
        mask ^= p.mask;
        value ^= p.value;
      }
    if (mask === 0n) {
      if (value !== 0n) return null;
      continue;
    }
    let bit = 0;
    while (!((mask >> BigInt(bit)) & 1n)) bit++;
    for (const p of pivots)
      if ((p.mask >> BigInt(bit)) & 1n) {
        p.mask ^= mask;
        p.value ^= value;
      }
    pivots.push({ bit, mask, value });
  }
  if (pivots.length < 128) return null;
  let s0 = 0n;
  let s1 = 0n;
  for (const p of pivots) {
    // Fully reduced: each pivot row holds its own bit only.
    if (p.value === 0n) continue;
    if (p.bit < 64) s0 |= 1n << BigInt(p.bit);
    else s1 |= 1n << BigInt(p.bit - 64);
  }
  return [s0, s1];
}

/**
 * The `count` values the isolate hands out after `observed` (consecutive outputs of its Math.random),
 * or null when no generator state explains them.
 */
export function predictAfter(observed: number[], count: number): number[] | null {
  for (let offset = 0; offset < CACHE && offset + CACHE <= observed.length; offset++) {
    // Assume observed[offset] is the first value handed out from a fresh cache (the last one generated).
    const block = observed.slice(offset, offset + CACHE);
    const generated = [...block].reverse();
    const start = solve(generated.slice(0, 4));
    if (!start) continue;
    let state = start;
    const values: number[] = [];
    for (let i = 0; i < CACHE; i++) {
      state = xorshift(state);
      values.push(toDouble(state[0]));
    }
    if (values.some((v, i) => v !== generated[i])) continue;
    // Generate on, block by block, and hand out in V8's order up to what follows the observed values.
    let position = offset;
    let blockValues = values;
    const out: number[] = [];
    for (;;) {
      for (let i = CACHE - 1; i >= 0; i--) {
        if (position >= observed.length) out.push(blockValues[i] as number);
        else if (observed[position] !== blockValues[i]) return null;
        position++;
        if (out.length === count) return out;
      }
      blockValues = [];
      for (let i = 0; i < CACHE; i++) {
        state = xorshift(state);
        blockValues.push(toDouble(state[0]));
      }
    }
  }
  return null;
}
