import { describe, expect, it } from 'vitest';
import type { Item, Json } from '../../../engine/types.js';
import type { matchByFields } from '../merge/match-index.js';
import { type CompareOptions, findMatches } from './compare.js';

/** The n × m loop the index replaced: every item of input A against every item of input B, in order. */
const loopMatch: typeof matchByFields = (left, right, rules, multiple) =>
  left.map((values) => {
    if (values === null) return [];
    const found: number[] = [];
    for (const [i, other] of right.entries()) {
      if (!values.every((v, f) => rules.equal(v, other[f]))) continue;
      found.push(i);
      if (multiple === 'first') break;
    }
    return found;
  });

/** Keys that meet the fuzzy rules: empties, numbers as text, true/false words, JSON text of objects. */
const KEYS: Array<Json | undefined> = [
  undefined,
  null,
  '',
  [],
  {},
  0,
  1,
  2,
  '0',
  '1',
  '2',
  '01',
  true,
  false,
  'true',
  'TRUE',
  'false',
  'x',
  'X',
  [1],
  '[1]',
  { a: 1 },
  '{"a":1}',
  '{"a": 1}',
];

/** The outputs, or the error's message: both ways must fail alike too. */
function outcome(
  a: Item[],
  b: Item[],
  pairs: Parameters<typeof findMatches>[2],
  o: CompareOptions,
  loop: boolean,
) {
  try {
    return findMatches(a, b, pairs, o, loop ? loopMatch : undefined);
  } catch (error) {
    return (error as Error).message;
  }
}

describe('Compare Datasets: keyed matching gives the loop’s outputs', () => {
  it('on random items: duplicates, missing fields, fuzzy compare, skip fields, every resolve and version', () => {
    let seed = 3;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(pool: readonly T[]) => pool[Math.floor(random() * pool.length)] as T;
    let compared = 0;
    for (let round = 0; round < 400; round++) {
      // Few distinct keys per round, so items repeat on both sides (several matches per item).
      const keys = Array.from({ length: 2 + Math.floor(random() * 6) }, () => pick(KEYS));
      const item = (): Item => {
        const json: Record<string, Json> = {};
        const k = pick(keys);
        if (k !== undefined) json.k = k;
        if (random() < 0.8) json.j = pick([1, '1', 'a', null]);
        if (random() < 0.8) json.v = pick(['same', 'other', 1, '1', '', null, true]);
        if (random() < 0.6) json.skipMe = Math.floor(random() * 3);
        if (random() < 0.7) json.o = { id: pick([1, '1', 2]), x: pick(['p', 'q']), y: pick([1, 2]) } as Json;
        return { json };
      };
      const a = Array.from({ length: Math.floor(random() * 15) }, item);
      const b = Array.from({ length: Math.floor(random() * 15) }, item);
      const pairs = pick([
        [{ field1: 'k', field2: 'k' }],
        [
          { field1: 'k', field2: 'k' },
          { field1: 'j', field2: 'j' },
        ],
        [{ field1: 'o.id', field2: 'o.id' }],
        [{ field1: 'k', field2: 'j' }],
      ]);
      const o: CompareOptions = {
        resolve: pick(['preferInput1', 'preferInput2', 'mix', 'includeBoth']),
        fuzzyCompare: random() < 0.5,
        multipleMatches: pick(['all', 'first', undefined]),
        disableDotNotation: random() < 0.2,
        skipFields: pick([undefined, '', 'skipMe', 'skipMe, v', 'o.x', 'o.x, skipMe']),
        exceptWhenMix: pick(['', 'v', 'v, o.y']),
        preferWhenMix: pick(['input1', 'input2']),
        version: pick([1, 2, 2.1, 2.2, 2.3]),
      };
      const keyed = outcome(a, b, pairs, o, false);
      expect(keyed, `round ${round}: ${JSON.stringify({ a, b, pairs, o })}`).toEqual(
        outcome(a, b, pairs, o, true),
      );
      if (typeof keyed !== 'string' && keyed.some((out, i) => i > 0 && i < 3 && out.length > 0)) compared++;
    }
    // Most rounds matched something (not only "in A only" / "in B only").
    expect(compared).toBeGreaterThan(200);
  });

  // The loop took 40 s here; the test's own timeout is the bound (no timing is asserted).
  it('splits 10,000 × 10,000 items that do not match through the index', () => {
    const a = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: i, v: 'a' } }));
    const b = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: -1 - i, v: 'b' } }));
    const c = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: String(i), v: i % 2 ? 'a' : 'c' } }));
    const pairs = [{ field1: 'k', field2: 'k' }];
    const apart = findMatches(a, b, pairs, { resolve: 'includeBoth', version: 2.3 });
    expect(apart.map((out) => out.length)).toEqual([10_000, 0, 0, 10_000]);
    const fuzzy = findMatches(a, c, pairs, { resolve: 'preferInput1', version: 2.3, fuzzyCompare: true });
    expect(fuzzy.map((out) => out.length)).toEqual([0, 5_000, 5_000, 0]);
  }, 15_000);

  it('fails past the bound on matched pairs; the first match only stays linear', () => {
    const same = (n: number) => Array.from({ length: n }, (_, i) => ({ json: { k: 1, i } }));
    const pairs = [{ field1: 'k', field2: 'k' }];
    expect(() =>
      findMatches(same(400), same(400), pairs, { resolve: 'includeBoth', multipleMatches: 'all' }),
    ).toThrow(/^Too many matches: more than 100800 pairs of items match/);
    const first = findMatches(same(400), same(400), pairs, { resolve: 'includeBoth' });
    expect(first.map((out) => out.length)).toEqual([0, 1, 399, 399]);
  });
});
