/**
 * Dot products of one query against many rows, in WebAssembly SIMD (f32x4): about three times faster
 * than the JavaScript loop (100k × 384 in ~20 ms instead of ~60 ms, measured here). The module is the
 * text below, assembled with wabt 1.x (`parseWat(..., {simd: true}).toBinary()`), embedded as base64:
 *
 * (module
 *   (import "env" "memory" (memory 1))
 *   ;; dots(q, base, count, dim, out): out[r] = dot(q[0..dim), base[r*dim ..]), f32, dim % 4 == 0
 *   (func (export "dots") (param $q i32) (param $base i32) (param $count i32) (param $dim i32) (param $out i32)
 *     (local $r i32) (local $i i32) (local $bytes i32) (local $row i32) (local $acc v128) (local $acc2 v128)
 *     (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
 *     (local.set $row (local.get $base))
 *     (block $done (loop $rows
 *       (br_if $done (i32.ge_u (local.get $r) (local.get $count)))
 *       (local.set $acc (v128.const f32x4 0 0 0 0))
 *       (local.set $i (i32.const 0))
 *       (block $end (loop $cols
 *         (br_if $end (i32.ge_u (local.get $i) (local.get $bytes)))
 *         (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
 *           (v128.load (i32.add (local.get $row) (local.get $i)))
 *           (v128.load (i32.add (local.get $q) (local.get $i))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $cols)))
 *       (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
 *         (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
 *                  (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
 *       (local.set $row (i32.add (local.get $row) (local.get $bytes)))
 *       (local.set $r (i32.add (local.get $r) (i32.const 1)))
 *       (br $rows))))
 * )
 */
const DOTS_WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAIPAQNlbnYGbWVtb3J5AgABAwIBAAcIAQRkb3RzAAAKnQEBmgECBH8CeyADQQJ0IQcgASEIAkADQCAFIAJPDQH9DAAAAAAAAAAAAAAAAAAAAAAhCUEAIQYCQANAIAYgB08NASAJIAggBmr9AAQAIAAgBmr9AAQA/eYB/eQBIQkgBkEQaiEGDAALCyAEIAVBAnRqIAn9HwAgCf0fAZIgCf0fAiAJ/R8DkpI4AgAgCCAHaiEIIAVBAWohBQwACwsL';

const PAGE_BYTES = 65_536;
const MAX_PAGES = 65_536;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/** The few WebAssembly constructors used (the project's TypeScript libs do not declare them). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: Wasm }).WebAssembly;

let compiled: object | null | undefined;

/** The compiled module, or null where WebAssembly SIMD is not available (the caller scans in JS). */
function dotsModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(Buffer.from(DOTS_WASM, 'base64')) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled ?? null;
}

type Dots = (query: number, base: number, count: number, dimensions: number, out: number) => void;

/**
 * One key's rows in WebAssembly memory: the query at the start, then `capacity` rows, then a score per
 * row. `data` is the rows' view, used like any Float32Array.
 */
export class DotArena {
  private constructor(
    readonly data: Float32Array,
    private readonly query: Float32Array,
    private readonly scores: Float32Array,
    private readonly dots: Dots,
    private readonly offsets: { data: number; scores: number },
    private readonly dimensions: number,
  ) {}

  /** An arena, or null when SIMD is unavailable, the dimensions are not a multiple of 4, or it is too big. */
  static create(dimensions: number, capacity: number): DotArena | null {
    if (dimensions <= 0 || dimensions % 4 !== 0) return null;
    const module = dotsModule();
    if (!module || !wasm) return null;
    const dataAt = align16(dimensions * 4);
    const scoresAt = dataAt + capacity * dimensions * 4;
    const pages = Math.ceil((scoresAt + capacity * 4) / PAGE_BYTES);
    if (pages > MAX_PAGES) return null;
    let memory: { buffer: ArrayBuffer };
    try {
      memory = new wasm.Memory({ initial: Math.max(1, pages) });
    } catch {
      return null;
    }
    const instance = new wasm.Instance(module, { env: { memory } });
    return new DotArena(
      new Float32Array(memory.buffer, dataAt, capacity * dimensions),
      new Float32Array(memory.buffer, 0, dimensions),
      new Float32Array(memory.buffer, scoresAt, capacity),
      instance.exports.dots as Dots,
      { data: dataAt, scores: scoresAt },
      dimensions,
    );
  }

  /** The dot product of `query` with each of the first `count` rows (a view, valid until the next call). */
  score(query: Float32Array, count: number): Float32Array {
    this.query.set(query);
    this.dots(0, this.offsets.data, count, this.dimensions, this.offsets.scores);
    return this.scores.subarray(0, count);
  }
}
