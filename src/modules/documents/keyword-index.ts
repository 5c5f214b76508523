/**
 * BM25 over every chunk of a topic, in process: an inverted index per key (a topic), kept beside its
 * vectors by the same cache (vector-cache.ts), so a keyword query reads no chunk row. The database's
 * full-text index answered "which chunks hold these words" and the ranking read each candidate's stored
 * terms back (up to ~10,000 rows a query at 100k chunks); here each query term's postings are summed,
 * every match is scored and the list is cut last, so the ranking is exact whatever the term frequencies,
 * and the same on SQLite and PostgreSQL.
 *
 * Each row is a chunk: its length in words and, per distinct word, (row, count) pairs in the word's
 * postings. Removing a chunk marks its row dead (skipped by searches); when dead rows pass a quarter
 * of the key, the postings are rewritten without them. Statistics (chunks, each term's document
 * frequency, mean length) are those of the keys searched together, live rows only: an account's
 * ranking never depends on another account's text.
 */
import { bm25Weight, idf } from './bm25.js';
import type { RankedChunk } from './types.js';

export interface KeywordItem {
  id: string;
  /** The chunk's stored terms (space-separated, stemmed at indexing: chunker.ts). */
  terms: string;
}

/** A key's rows and postings, compacted, as a snapshot holds them (topic-snapshot.ts). */
export interface KeywordPart {
  ids: string[];
  /** Words per row. */
  lengths: Int32Array;
  terms: string[];
  /** Postings pairs per term, in `terms` order. */
  counts: Int32Array;
  /** Every term's (row, count) pairs, one term after another. */
  postings: Int32Array;
}

interface Postings {
  /** Interleaved (row, count) pairs; `n` pairs in use. */
  data: Int32Array;
  n: number;
}

interface Rows {
  ids: string[];
  rowOf: Map<string, number>;
  /** Words per row; -1 marks a dead row. */
  lengths: Int32Array;
  live: number;
  dead: number;
  /** Sum of the live rows' lengths. */
  words: number;
  terms: Map<string, Postings>;
  /** Int32 slots held by postings (what `bytes` counts). */
  slots: number;
}

/** Dead rows are dropped from the postings once they are this share of a key's rows (and 256 or more). */
const COMPACT_SHARE = 0.25;
const COMPACT_MIN = 256;

/** A key's statistics and postings for the query's terms, gathered before scoring. */
interface Searched {
  rows: Rows;
  postings: Array<Postings | undefined>;
}

export class KeywordIndex {
  private readonly keys = new Map<string, Rows>();
  private scoreScratch = new Float64Array(0);

  /** Adds chunks under `key`, replacing any with the same id. Adding none still makes `has(key)` true. */
  add(key: string, items: readonly KeywordItem[]): void {
    let rows = this.keys.get(key);
    if (!rows) {
      rows = {
        ids: [],
        rowOf: new Map(),
        lengths: new Int32Array(16),
        live: 0,
        dead: 0,
        words: 0,
        terms: new Map(),
        slots: 0,
      };
      this.keys.set(key, rows);
    }
    for (const { id, terms } of items) {
      if (rows.rowOf.has(id)) this.remove(key, [id]);
      const row = rows.ids.length;
      if (row >= rows.lengths.length) {
        const grown = new Int32Array(Math.max(16, Math.ceil(rows.lengths.length * 1.5), row + 1));
        grown.set(rows.lengths);
        rows.lengths = grown;
      }
      // Segments as `split(' ')` gives them (an empty text has none): what bm25.ts's `tokenize` counts.
      // A word seen before in this row is the last pair of its postings: its count goes up.
      let length = 0;
      for (let start = 0; terms !== '' && start <= terms.length; length++) {
        let end = terms.indexOf(' ', start);
        if (end < 0) end = terms.length;
        const w = terms.slice(start, end);
        start = end + 1;
        let p = rows.terms.get(w);
        if (!p) {
          p = { data: new Int32Array(2), n: 0 };
          rows.terms.set(w, p);
          rows.slots += 2;
        } else if (p.n > 0 && p.data[p.n * 2 - 2] === row) {
          p.data[p.n * 2 - 1] = p.data[p.n * 2 - 1]! + 1;
          continue;
        }
        if (p.n * 2 + 2 > p.data.length) {
          const grown = new Int32Array(Math.max(4, p.data.length * 2));
          grown.set(p.data);
          rows.slots += grown.length - p.data.length;
          p.data = grown;
        }
        p.data[p.n * 2] = row;
        p.data[p.n * 2 + 1] = 1;
        p.n++;
      }
      rows.ids.push(id);
      rows.rowOf.set(id, row);
      rows.lengths[row] = length;
      rows.live++;
      rows.words += length;
    }
  }

  /** Removes the given ids from `key`; unknown ids are ignored. Returns how many were removed. */
  remove(key: string, ids: Iterable<string>): number {
    const rows = this.keys.get(key);
    if (!rows) return 0;
    let removed = 0;
    for (const id of ids) {
      const row = rows.rowOf.get(id);
      if (row === undefined) continue;
      rows.rowOf.delete(id);
      rows.ids[row] = '';
      rows.words -= rows.lengths[row]!;
      rows.lengths[row] = -1;
      rows.live--;
      rows.dead++;
      removed++;
    }
    if (rows.dead >= COMPACT_MIN && rows.dead > rows.ids.length * COMPACT_SHARE) this.compact(rows);
    return removed;
  }

  /** The key's live rows and postings (compacted first: dead rows are not kept), or null when absent. */
  exportKey(key: string): KeywordPart | null {
    const rows = this.keys.get(key);
    if (!rows) return null;
    if (rows.dead > 0) this.compact(rows);
    const terms: string[] = [];
    const counts = new Int32Array(rows.terms.size);
    let total = 0;
    for (const [term, p] of rows.terms) {
      counts[terms.length] = p.n;
      terms.push(term);
      total += p.n * 2;
    }
    const postings = new Int32Array(total);
    let at = 0;
    for (const p of rows.terms.values()) {
      postings.set(p.data.subarray(0, p.n * 2), at);
      at += p.n * 2;
    }
    return {
      ids: rows.ids.slice(),
      lengths: rows.lengths.slice(0, rows.ids.length),
      terms,
      counts,
      postings,
    };
  }

  /**
   * Puts an exported key under `key` as it was (replacing what `key` held): no term is counted again.
   * Each term's postings are a view of `part.postings` until it grows.
   */
  importKey(key: string, part: KeywordPart): void {
    const terms = new Map<string, Postings>();
    let at = 0;
    for (const [i, term] of part.terms.entries()) {
      const n = part.counts[i]!;
      terms.set(term, { data: part.postings.subarray(at, at + n * 2), n });
      at += n * 2;
    }
    const lengths = new Int32Array(Math.max(16, part.ids.length));
    lengths.set(part.lengths.subarray(0, part.ids.length));
    let words = 0;
    for (let row = 0; row < part.ids.length; row++) words += lengths[row]!;
    this.keys.set(key, {
      ids: part.ids.slice(),
      rowOf: new Map(part.ids.map((id, row) => [id, row])),
      lengths,
      live: part.ids.length,
      dead: 0,
      words,
      terms,
      slots: at,
    });
  }

  /** Puts the rows of `from` under `to` (replacing what `to` held): a key built aside goes live at once. */
  move(from: string, to: string): void {
    const rows = this.keys.get(from);
    this.keys.delete(from);
    if (rows) this.keys.set(to, rows);
    else this.keys.delete(to);
  }

  drop(key: string): boolean {
    return this.keys.delete(key);
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Live chunks under `key`. */
  size(key: string): number {
    return this.keys.get(key)?.live ?? 0;
  }

  /** Memory held, roughly: postings at 4 bytes a slot, ~64 bytes a distinct term, ~48 a row. */
  bytes(): number {
    let n = 0;
    for (const rows of this.keys.values()) n += rowBytes(rows);
    return n;
  }

  /** `bytes` of one key. */
  bytesOf(key: string): number {
    const rows = this.keys.get(key);
    return rows ? rowBytes(rows) : 0;
  }

  /**
   * The `k` best chunks by Okapi BM25 (bm25.ts's parameters) for `terms` across `keys`: every chunk
   * holding a term is scored, with the statistics of the keys searched (their live chunks, each term's
   * document frequency, their mean length in words). Ordered as bm25.ts orders (score to 1e-9, then id);
   * terms are summed rarest first, as there. Ids are expected to be unique across the keys.
   */
  search(keys: readonly string[], terms: readonly string[], k: number): RankedChunk[] {
    const searched: Searched[] = [];
    let total = 0;
    let words = 0;
    const df = new Map<string, number>();
    for (const key of new Set(keys)) {
      const rows = this.keys.get(key);
      if (!rows || rows.live === 0) continue;
      const postings = terms.map((t) => rows.terms.get(t));
      for (const [i, term] of terms.entries()) {
        const p = postings[i];
        if (p) df.set(term, (df.get(term) ?? 0) + liveCount(rows, p));
      }
      searched.push({ rows, postings });
      total += rows.live;
      words += rows.words;
    }
    const limit = Math.floor(k);
    if (searched.length === 0 || !(limit > 0)) return [];
    // Rarest first, as the ranking before summed them (a stable sort: ties keep the query's order).
    const order = terms
      .map((term, i) => ({ term, i, n: df.get(term) ?? 0 }))
      .filter((t) => t.n > 0)
      .sort((a, b) => a.n - b.n);
    if (order.length === 0) return [];
    const average = words / total || 1;
    // The k best scores so far in a min-heap: its root is a floor under the final k-th best, so only
    // rows at or above it become hits (at 100k chunks a common term touches most rows; a hit object and
    // a sort of every one of them was most of a query's time).
    const best = new MinHeap(limit);
    const hits: RankedChunk[] = [];
    for (const { rows, postings } of searched) {
      const scratch = this.scratch(rows.ids.length);
      const touched: number[] = [];
      const { lengths } = rows;
      for (const { term, i } of order) {
        const p = postings[i];
        if (!p) continue;
        const weight = idf(df.get(term)!, total);
        const { data, n } = p;
        for (let j = 0; j < n; j++) {
          const row = data[j * 2]!;
          const length = lengths[row]!;
          if (length < 0) continue;
          if (scratch[row] === 0) touched.push(row);
          scratch[row] = scratch[row]! + bm25Weight(weight, data[j * 2 + 1]!, length, average);
        }
      }
      for (const row of touched) {
        const score = scratch[row]!;
        scratch[row] = 0;
        best.offer(score);
        if (score >= best.floor() - 1e-8) hits.push({ chunkId: rows.ids[row]!, score });
      }
    }
    // Hits within rounding of the k-th best score are sorted with the full comparator.
    const floor = best.full() ? best.floor() - 1e-8 : -Infinity;
    return hits
      .filter((h) => h.score >= floor)
      .sort((a, b) => Math.round((b.score - a.score) * 1e9) || (a.chunkId < b.chunkId ? -1 : 1))
      .slice(0, limit);
  }

  /** A zeroed score per row (zeroed again by the search after use: the process is one thread). */
  private scratch(rows: number): Float64Array {
    if (this.scoreScratch.length < rows)
      this.scoreScratch = new Float64Array(Math.max(rows, Math.ceil(this.scoreScratch.length * 1.5)));
    return this.scoreScratch;
  }

  /** Rewrites the postings without dead rows and renumbers the rows. */
  private compact(rows: Rows): void {
    const remap = new Int32Array(rows.ids.length);
    const ids: string[] = [];
    const lengths = new Int32Array(Math.max(16, rows.live));
    for (let row = 0; row < rows.ids.length; row++) {
      if (rows.lengths[row]! < 0) {
        remap[row] = -1;
        continue;
      }
      remap[row] = ids.length;
      lengths[ids.length] = rows.lengths[row]!;
      rows.rowOf.set(rows.ids[row]!, ids.length);
      ids.push(rows.ids[row]!);
    }
    let slots = 0;
    for (const [term, p] of rows.terms) {
      let n = 0;
      for (let j = 0; j < p.n; j++) {
        const to = remap[p.data[j * 2]!]!;
        if (to < 0) continue;
        p.data[n * 2] = to;
        p.data[n * 2 + 1] = p.data[j * 2 + 1]!;
        n++;
      }
      if (n === 0) {
        rows.terms.delete(term);
        continue;
      }
      if (n * 2 < p.data.length / 4) p.data = p.data.slice(0, Math.max(4, n * 4));
      p.n = n;
      slots += p.data.length;
    }
    rows.ids = ids;
    rows.lengths = lengths;
    rows.dead = 0;
    rows.slots = slots;
  }
}

/** The `capacity` largest numbers offered so far; `floor` is the smallest of them (-Infinity until full). */
class MinHeap {
  private readonly heap: Float64Array;
  private n = 0;

  constructor(private readonly capacity: number) {
    this.heap = new Float64Array(capacity);
  }

  full(): boolean {
    return this.n === this.capacity;
  }

  floor(): number {
    return this.n === this.capacity ? this.heap[0]! : -Infinity;
  }

  offer(value: number): void {
    const h = this.heap;
    if (this.n < this.capacity) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (h[parent]! <= value) break;
        h[i] = h[parent]!;
        i = parent;
      }
      h[i] = value;
      return;
    }
    if (value <= h[0]!) return;
    let i = 0;
    for (;;) {
      const left = i * 2 + 1;
      if (left >= this.n) break;
      const right = left + 1;
      const child = right < this.n && h[right]! < h[left]! ? right : left;
      if (h[child]! >= value) break;
      h[i] = h[child]!;
      i = child;
    }
    h[i] = value;
  }
}

function rowBytes(rows: Rows): number {
  return rows.slots * 4 + rows.terms.size * 64 + rows.lengths.length * 4 + rows.ids.length * 48;
}

/** Postings of live rows (all of them when the key has no dead row). */
function liveCount(rows: Rows, p: Postings): number {
  if (rows.dead === 0) return p.n;
  let n = 0;
  for (let j = 0; j < p.n; j++) if (rows.lengths[p.data[j * 2]!]! >= 0) n++;
  return n;
}
