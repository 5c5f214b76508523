/**
 * A key's vectors stored column by column in WebAssembly memory, scored with SIMD (f32x4) four rows at a
 * time: `axpy` adds q[d] × column d into the lane accumulator of d mod 4, `combine` sums the lanes as
 * (lane 0 + lane 1) + (lane 2 + lane 3). Every operation is a float32 multiply or add, as the JavaScript
 * path in vector-index.ts does them, so both give the same bits. About four times faster than that loop.
 * The module is the text below, assembled by hand (the byte encoding is plain: types, the imported
 * memory, two functions, their exports and bodies) and embedded as base64:
 *
 * (module
 *   (import "env" "memory" (memory 1))
 *   ;; axpy(q, col, acc, bytes): acc[i] += q * col[i] for the first `bytes` bytes (a multiple of 16)
 *   (func (export "axpy") (param $q f32) (param $col i32) (param $acc i32) (param $n i32)
 *     (local $i i32) (local $qv v128)
 *     (local.set $qv (f32x4.splat (local.get $q)))
 *     (block $done (loop $next
 *       (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
 *       (v128.store (i32.add (local.get $acc) (local.get $i))
 *         (f32x4.add (v128.load (i32.add (local.get $acc) (local.get $i)))
 *                    (f32x4.mul (local.get $qv) (v128.load (i32.add (local.get $col) (local.get $i))))))
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br $next))))
 *   ;; combine(base, stride, bytes): lane 0 = (lane 0 + lane 1) + (lane 2 + lane 3), lane k at base + k × stride
 *   (func (export "combine") (param $base i32) (param $stride i32) (param $n i32)
 *     (local $i i32) (local $p i32)
 *     (block $done (loop $next
 *       (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
 *       (local.set $p (i32.add (local.get $base) (local.get $i)))
 *       (v128.store (local.get $p)
 *         (f32x4.add
 *           (f32x4.add (v128.load (local.get $p)) (v128.load (i32.add (local.get $p) (local.get $stride))))
 *           (f32x4.add (v128.load (i32.add (local.get $p) (i32.shl (local.get $stride) (i32.const 1))))
 *                      (v128.load (i32.add (local.get $p) (i32.mul (local.get $stride) (i32.const 3)))))))
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br $next))))
 * )
 */
const COLUMNS_WASM =
  'AGFzbQEAAAABDgJgBH1/f38AYAN/f38AAg8BA2VudgZtZW1vcnkCAAEDAwIAAQcSAgRheHB5AAAHY29tYmluZQABCp8BAkUCAX8BeyAA/RMhBQJAA0AgBCADTw0BIAIgBGogAiAEav0ABAAgBSABIARq/QAEAP3mAf3kAf0LBAAgBEEQaiEEDAALCwtXAQJ/AkADQCADIAJPDQEgACADaiEEIAQgBP0ABAAgBCABav0ABAD95AEgBCABQQF0av0ABAAgBCABQQNsav0ABAD95AH95AH9CwQAIANBEGohAwwACwsL';

const PAGE_BYTES = 65_536;
/** 4 GiB: the most a 32-bit WebAssembly memory addresses. */
const MAX_PAGES = 65_536;

/** The few WebAssembly constructors used (the project's TypeScript libs do not declare them). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: Wasm }).WebAssembly;

let compiled: object | null | undefined;

/** The compiled module, or null where WebAssembly SIMD is not available (the caller scans in JS). */
function columnsModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(Buffer.from(COLUMNS_WASM, 'base64')) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled ?? null;
}

type Axpy = (q: number, column: number, accumulator: number, bytes: number) => void;
type Combine = (base: number, stride: number, bytes: number) => void;

/**
 * `dimensions` columns of `capacity` floats (a multiple of 4), then four lanes of `capacity` floats.
 * `data` is the columns' view, used like any Float32Array.
 */
export class ColumnArena {
  private constructor(
    readonly data: Float32Array,
    private readonly lanes: Float32Array,
    private readonly capacity: number,
    private readonly axpy: Axpy,
    private readonly combine: Combine,
  ) {}

  /** An arena, or null when SIMD is unavailable, the capacity is not a multiple of 4, or it is too big. */
  static create(dimensions: number, capacity: number): ColumnArena | null {
    if (dimensions <= 0 || capacity <= 0 || capacity % 4 !== 0) return null;
    const module = columnsModule();
    if (!module || !wasm) return null;
    const pages = Math.ceil(((dimensions + 4) * capacity * 4) / PAGE_BYTES);
    if (pages > MAX_PAGES) return null;
    let memory: { buffer: ArrayBuffer };
    try {
      memory = new wasm.Memory({ initial: pages });
    } catch {
      return null;
    }
    const { exports } = new wasm.Instance(module, { env: { memory } });
    return new ColumnArena(
      new Float32Array(memory.buffer, 0, dimensions * capacity),
      new Float32Array(memory.buffer, dimensions * capacity * 4, 4 * capacity),
      capacity,
      exports.axpy as Axpy,
      exports.combine as Combine,
    );
  }

  /**
   * The dot product of `unit` with each of the first `count` rows, over the dimensions listed in
   * `nonZero` (ascending); a view, valid until the next call.
   */
  score(unit: Float32Array, nonZero: readonly number[], count: number): Float32Array {
    const { capacity, lanes } = this;
    const bytes = Math.ceil(count / 4) * 16;
    const lanesAt = lanes.byteOffset;
    for (let lane = 0; lane < 4; lane++)
      lanes.fill(0, lane * capacity, lane * capacity + Math.ceil(count / 4) * 4);
    for (const d of nonZero) this.axpy(unit[d]!, d * capacity * 4, lanesAt + (d & 3) * capacity * 4, bytes);
    this.combine(lanesAt, capacity * 4, bytes);
    return lanes.subarray(0, count);
  }
}
