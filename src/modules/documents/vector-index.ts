/**
 * Exact cosine search in process, for databases without a vector extension.
 *
 * Each key (a topic) keeps its unit-normalised vectors column by column: dimension d of every row sits in
 * one run of `capacity` floats. A query is scored one dimension at a time, and only over the dimensions it
 * does not hold zero in: the default hashed embedder gives a question of a few words ~30–60 non-zero
 * dimensions of 384, so a scan reads a tenth of the floats a row-by-row scan reads (100k rows: ~16 MB
 * instead of 154 MB). Scores are float32 sums in four lanes by dimension (d mod 4), added pairwise at the
 * end, which is bit for bit what a 4-lane SIMD dot product gives. Ids map to rows; removing moves the last
 * row into the hole, so rows stay dense. Results are ordered by score, then id ascending, so the same
 * vectors give the same answer whatever order they were loaded in.
 */
import { ColumnArena } from './column-arena.js';
import type { RankedChunk } from './types.js';

export interface VectorItem {
  id: string;
  vector: ArrayLike<number>;
}

/** A key's vectors as a snapshot holds them (topic-snapshot.ts): unit floats, column by column. */
export interface VectorPart {
  dimensions: number;
  ids: string[];
  /** `dimensions × ids.length` floats: column d at `d × ids.length`. */
  columns: Float32Array;
}

interface Rows {
  /** Set by the first vector added; 0 while the key holds none. */
  dimensions: number;
  /** Rows the columns have room for. */
  capacity: number;
  /** `dimensions × capacity` floats: column d at `d × capacity`; rows [0, ids.length) are in use. */
  data: Float32Array;
  ids: string[];
  rowOf: Map<string, number>;
  /** The columns in WebAssembly memory, scored with SIMD; absent for small keys or where unavailable. */
  arena?: ColumnArena;
  /** Rows the key is expected to reach (`expect`): its first growth makes room for them at once. */
  expected?: number;
}

const INITIAL_ROWS = 16;
/** Keys this large keep their columns in WebAssembly memory (smaller ones scan fast enough in JS). */
const ARENA_ROWS = 4_096;

/** Float32 values of `vector` scaled to length 1 (left at zero for a zero vector). */
function normalised(vector: ArrayLike<number>, into: Float32Array, at: number): void {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const scale = sum > 0 ? 1 / Math.sqrt(sum) : 0;
  for (let i = 0; i < vector.length; i++) into[at + i] = vector[i]! * scale;
}

function checkFinite(vector: ArrayLike<number>, what: string): void {
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new RangeError(`${what} has a non-finite value at ${i}`);
  }
}

/** `a` ranks below `b`: lower score, or the same score and a later id. */
const ranksBelow = (scoreA: number, idA: string, scoreB: number, idB: string): boolean =>
  scoreA < scoreB || (scoreA === scoreB && idA > idB);

/** Bounded heap of the best `capacity` hits so far; the root is the worst of them. */
class TopK {
  private readonly scores: Float64Array;
  private readonly ids: string[] = [];

  constructor(private readonly capacity: number) {
    this.scores = new Float64Array(capacity);
  }

  /** Whether a hit would enter the heap (checked before the caller's filter, which may be costly). */
  accepts(score: number, id: string): boolean {
    return this.ids.length < this.capacity || ranksBelow(this.scores[0]!, this.ids[0]!, score, id);
  }

  /** Adds a hit that `accepts` let in. */
  push(score: number, id: string): void {
    const { scores, ids } = this;
    if (ids.length < this.capacity) {
      // Sift up from the new leaf.
      let at = ids.length;
      ids.push(id);
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!ranksBelow(score, id, scores[parent]!, ids[parent]!)) break;
        scores[at] = scores[parent]!;
        ids[at] = ids[parent]!;
        at = parent;
      }
      scores[at] = score;
      ids[at] = id;
      return;
    }
    // Replace the root and sift down.
    const size = ids.length;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) break;
      const right = left + 1;
      const child =
        right < size && ranksBelow(scores[right]!, ids[right]!, scores[left]!, ids[left]!) ? right : left;
      if (!ranksBelow(scores[child]!, ids[child]!, score, id)) break;
      scores[at] = scores[child]!;
      ids[at] = ids[child]!;
      at = child;
    }
    scores[at] = score;
    ids[at] = id;
  }

  /** Best first. */
  sorted(): RankedChunk[] {
    const hits = this.ids.map((chunkId, i) => ({ chunkId, score: this.scores[i]! }));
    return hits.sort(
      (a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0),
    );
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class VectorIndex {
  private readonly keys = new Map<string, Rows>();
  private scratch: Float32Array[] = [0, 1, 2, 3].map(() => new Float32Array(0));

  /** Float32 little-endian bytes, as stored in a BLOB / bytea column. */
  static toBytes(vector: ArrayLike<number>): Buffer {
    return VectorIndex.floatBytes(Float32Array.from(vector));
  }

  /** `toBytes` of floats already in a Float32Array: their memory as is on a little-endian host. */
  static floatBytes(vector: Float32Array): Buffer {
    if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    const bytes = Buffer.allocUnsafe(vector.length * 4);
    for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
    return bytes;
  }

  /** The vector in `toBytes` form; copies, so the bytes may sit at any offset of any buffer. */
  static fromBytes(bytes: Uint8Array): Float32Array {
    if (bytes.byteLength % 4 !== 0) {
      throw new RangeError(`a float32 vector needs a multiple of 4 bytes, not ${bytes.byteLength}`);
    }
    if (LITTLE_ENDIAN)
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const vector = new Float32Array(bytes.byteLength / 4);
    for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
    return vector;
  }

  /**
   * Adds vectors under `key`, replacing any with the same id. The first vector fixes the key's dimensions;
   * the whole batch is checked before anything changes. Adding no items still makes `has(key)` true.
   */
  add(key: string, items: readonly VectorItem[]): void {
    const existing = this.keys.get(key);
    const dimensions = existing?.dimensions || items[0]?.vector.length || 0;
    for (const { id, vector } of items) {
      if (vector.length !== dimensions || dimensions === 0) {
        throw new RangeError(`vector ${id} has ${vector.length} dimensions; ${key} holds ${dimensions}`);
      }
      checkFinite(vector, `vector ${id}`);
    }
    const rows: Rows = existing ?? {
      dimensions: 0,
      capacity: 0,
      data: new Float32Array(0),
      ids: [],
      rowOf: new Map(),
    };
    if (!existing) this.keys.set(key, rows);
    if (items.length === 0) return;
    rows.dimensions = dimensions;
    this.reserve(rows, rows.ids.length + items.length);
    const unit = new Float32Array(dimensions);
    for (const { id, vector } of items) {
      let row = rows.rowOf.get(id);
      if (row === undefined) {
        row = rows.ids.length;
        rows.ids.push(id);
        rows.rowOf.set(id, row);
      }
      normalised(vector, unit, 0);
      for (let d = 0, at = row; d < dimensions; d++, at += rows.capacity) rows.data[at] = unit[d]!;
    }
  }

  /** Removes the given ids from `key`; unknown ids are ignored. Returns how many were removed. */
  remove(key: string, ids: Iterable<string>): number {
    const rows = this.keys.get(key);
    if (!rows) return 0;
    const { data, dimensions, capacity } = rows;
    let removed = 0;
    for (const id of ids) {
      const row = rows.rowOf.get(id);
      if (row === undefined) continue;
      const last = rows.ids.length - 1;
      if (row !== last) {
        const moved = rows.ids[last]!;
        for (let d = 0, base = 0; d < dimensions; d++, base += capacity)
          data[base + row] = data[base + last]!;
        rows.ids[row] = moved;
        rows.rowOf.set(moved, row);
      }
      rows.ids.pop();
      rows.rowOf.delete(id);
      removed++;
    }
    // Give memory back after large deletions.
    if (capacity > INITIAL_ROWS * 4 && rows.ids.length < capacity / 4) {
      this.resize(rows, Math.max(INITIAL_ROWS, rows.ids.length * 2));
    }
    return removed;
  }

  /** Puts the vectors of `from` under `to` (replacing what `to` held): a key built aside goes live at once. */
  move(from: string, to: string): void {
    const rows = this.keys.get(from);
    this.keys.delete(from);
    if (rows) this.keys.set(to, rows);
    else this.keys.delete(to);
  }

  /** The key's vectors as stored (already unit length), or null when absent. */
  exportKey(key: string): VectorPart | null {
    const rows = this.keys.get(key);
    if (!rows) return null;
    const count = rows.ids.length;
    const columns = new Float32Array(rows.dimensions * count);
    for (let d = 0; d < rows.dimensions; d++)
      columns.set(rows.data.subarray(d * rows.capacity, d * rows.capacity + count), d * count);
    return { dimensions: rows.dimensions, ids: rows.ids.slice(), columns };
  }

  /**
   * Puts exported vectors under `key` as they were (replacing what `key` held): copied bit for bit, not
   * normalised again, so a search gives what it gave before the export.
   */
  importKey(key: string, part: VectorPart): void {
    const count = part.ids.length;
    const rows: Rows = {
      dimensions: count > 0 ? part.dimensions : 0,
      capacity: 0,
      data: new Float32Array(0),
      ids: part.ids.slice(),
      rowOf: new Map(part.ids.map((id, row) => [id, row])),
    };
    this.keys.set(key, rows);
    if (rows.dimensions === 0) return;
    this.resize(rows, Math.max(INITIAL_ROWS, count));
    for (let d = 0; d < rows.dimensions; d++)
      rows.data.set(part.columns.subarray(d * count, (d + 1) * count), d * rows.capacity);
  }

  /**
   * `key` (added already) will hold about `count` rows: its next growth makes room for all of them, so a
   * topic loaded page by page is copied once, not at every growth (each a new WebAssembly arena).
   */
  expect(key: string, count: number): void {
    const rows = this.keys.get(key);
    if (rows) rows.expected = count;
  }

  /** Forgets `key` and its vectors. */
  drop(key: string): boolean {
    return this.keys.delete(key);
  }

  size(key: string): number {
    return this.keys.get(key)?.ids.length ?? 0;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** The key's vector length, fixed by its first vector; undefined before one was added. */
  dimensions(key: string): number | undefined {
    return this.keys.get(key)?.dimensions || undefined;
  }

  /**
   * The `k` vectors most similar to `query` (cosine) across `keys`, best first, ties by id ascending.
   * Unknown keys hold nothing. `filter`, when given, is asked only about hits that would make the top k.
   * Ids are expected to be unique across the keys searched together.
   */
  search(
    keys: readonly string[],
    query: ArrayLike<number>,
    k: number,
    filter?: (id: string) => boolean,
  ): RankedChunk[] {
    checkFinite(query, 'the query');
    const searched: Rows[] = [];
    let total = 0;
    for (const key of new Set(keys)) {
      const rows = this.keys.get(key);
      if (!rows || rows.ids.length === 0) continue;
      if (rows.dimensions !== query.length) {
        throw new RangeError(`the query has ${query.length} dimensions; ${key} holds ${rows.dimensions}`);
      }
      searched.push(rows);
      total += rows.ids.length;
    }
    const limit = Math.min(Math.floor(k), total);
    if (!(limit > 0)) return [];
    const unit = new Float32Array(query.length);
    normalised(query, unit, 0);
    const nonZero: number[] = [];
    for (let d = 0; d < unit.length; d++) if (unit[d] !== 0) nonZero.push(d);
    const top = new TopK(limit);
    for (const rows of searched) {
      const scores = this.scores(rows, unit, nonZero);
      const { ids } = rows;
      for (let row = 0; row < ids.length; row++) {
        const score = scores[row]!;
        const id = ids[row]!;
        if (top.accepts(score, id) && (filter === undefined || filter(id))) top.push(score, id);
      }
    }
    return top.sorted();
  }

  /** Float32 vectors held: what the index costs in memory, at 4 bytes a float plus the ids. */
  floats(): number {
    let n = 0;
    for (const rows of this.keys.values()) n += rows.capacity * rows.dimensions;
    return n;
  }

  /** The floats one key holds (`floats` of that key alone). */
  floatsOf(key: string): number {
    const rows = this.keys.get(key);
    return rows ? rows.capacity * rows.dimensions : 0;
  }

  /**
   * The dot product of `unit` with each row, summed as a 4-lane float32 SIMD loop would: lane d mod 4
   * adds the float32 products in dimension order, then (lane 0 + lane 1) + (lane 2 + lane 3). Dimensions
   * where the query is zero add ±0 to every lane and are skipped. A Float32Array element written rounds
   * the float64 sum of two float32 values exactly as a float32 addition would.
   */
  private scores(rows: Rows, unit: Float32Array, nonZero: readonly number[]): Float32Array {
    const count = rows.ids.length;
    if (rows.arena) return rows.arena.score(unit, nonZero, count);
    const { data, capacity } = rows;
    const lanes = this.lanes(count);
    for (const lane of lanes) lane.fill(0, 0, count);
    for (const d of nonZero) {
      const lane = lanes[d & 3]!;
      const q = unit[d]!;
      const base = d * capacity;
      for (let row = 0; row < count; row++) lane[row] = lane[row]! + Math.fround(q * data[base + row]!);
    }
    const [l0, l1, l2, l3] = lanes as [Float32Array, Float32Array, Float32Array, Float32Array];
    for (let row = 0; row < count; row++)
      l0[row] = Math.fround(l0[row]! + l1[row]!) + Math.fround(l2[row]! + l3[row]!);
    return l0;
  }

  /** Four scratch arrays of at least `count` floats, kept between searches (the process is one thread). */
  private lanes(count: number): Float32Array[] {
    if (this.scratch[0]!.length < count) {
      const size = Math.max(count, Math.ceil(this.scratch[0]!.length * 1.5));
      this.scratch = [0, 1, 2, 3].map(() => new Float32Array(size));
    }
    return this.scratch;
  }

  /** Makes room for `needed` rows, growing by half again at least so adds stay amortised O(1). */
  private reserve(rows: Rows, needed: number): void {
    if (needed <= rows.capacity) return;
    const expected = rows.expected ?? 0;
    rows.expected = undefined;
    this.resize(rows, Math.max(needed, expected, Math.ceil(rows.capacity * 1.5), INITIAL_ROWS));
  }

  private resize(rows: Rows, wanted: number): void {
    const { dimensions } = rows;
    // A multiple of 4: the SIMD scan reads columns four rows at a time, from 16-byte boundaries.
    const capacity = Math.ceil(wanted / 4) * 4;
    const arena = capacity >= ARENA_ROWS ? ColumnArena.create(dimensions, capacity) : null;
    const data = arena ? arena.data : new Float32Array(capacity * dimensions);
    const count = rows.ids.length;
    for (let d = 0; d < dimensions; d++)
      data.set(rows.data.subarray(d * rows.capacity, d * rows.capacity + count), d * capacity);
    rows.data = data;
    rows.capacity = capacity;
    if (arena) rows.arena = arena;
    else delete rows.arena;
  }
}
