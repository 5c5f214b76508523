import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RankedChunk } from './types.js';
import { VectorIndex } from './vector-index.js';

const ids = (hits: RankedChunk[]) => hits.map((hit) => hit.chunkId);

/** Plain float64 cosine over every vector, sorted the way the index promises. */
function bruteForce(vectors: Map<string, number[]>, query: number[], k: number): RankedChunk[] {
  const norm = (v: number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  const hits = [...vectors].map(([chunkId, v]) => {
    const lengths = norm(v) * norm(query);
    const dot = v.reduce((sum, x, i) => sum + x * query[i]!, 0);
    return { chunkId, score: lengths === 0 ? 0 : dot / lengths };
  });
  hits.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));
  return hits.slice(0, Math.max(0, k));
}

describe('VectorIndex search', () => {
  it('ranks by cosine similarity', () => {
    const index = new VectorIndex();
    index.add('t', [
      { id: 'x', vector: [3, 0] },
      { id: 'y', vector: [0, 2] },
      { id: 'xy', vector: [5, 5] },
      { id: 'minus-x', vector: [-1, 0] },
    ]);
    const hits = index.search(['t'], [10, 0], 10);
    expect(ids(hits)).toEqual(['x', 'xy', 'y', 'minus-x']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 6);
    expect(hits[2]!.score).toBeCloseTo(0, 6);
    expect(hits[3]!.score).toBeCloseTo(-1, 6);
    expect(ids(index.search(['t'], [1, 1], 1))).toEqual(['xy']);
  });

  it('breaks ties by id whatever the order of insertion', () => {
    const same = [1, 2, 3];
    const forward = new VectorIndex();
    forward.add(
      't',
      ['a', 'b', 'c', 'd'].map((id) => ({ id, vector: same })),
    );
    const backward = new VectorIndex();
    backward.add(
      't',
      ['d', 'c', 'b', 'a'].map((id) => ({ id, vector: same.map((x) => x * 7) })),
    );
    for (const index of [forward, backward]) {
      expect(ids(index.search(['t'], [3, 2, 1], 4))).toEqual(['a', 'b', 'c', 'd']);
      expect(ids(index.search(['t'], [3, 2, 1], 2))).toEqual(['a', 'b']);
    }
    expect(forward.search(['t'], [3, 2, 1], 4)).toEqual(backward.search(['t'], [3, 2, 1], 4));
  });

  it('matches a brute-force search, through adds, replacements and removals', () => {
    const vector = fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 5, maxLength: 5 });
    const operation = fc.oneof(
      fc.record({ add: fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), vector), { maxLength: 12 }) }),
      fc.record({ remove: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 12 }),
        vector,
        fc.integer({ min: 0, max: 45 }),
        (ops, query, k) => {
          const index = new VectorIndex();
          const reference = new Map<string, number[]>();
          for (const op of ops) {
            if ('add' in op) {
              const items = op.add.map(([n, v]) => ({ id: `c${n}`, vector: v }));
              index.add('t', items);
              for (const item of items) reference.set(item.id, item.vector);
            } else {
              const gone = op.remove.map((n) => `c${n}`);
              index.remove('t', gone);
              for (const id of gone) reference.delete(id);
            }
          }
          expect(index.size('t')).toBe(reference.size);
          const hits = index.search(['t'], query, k);
          const expected = bruteForce(reference, query, k);
          // Integer vectors tie often and near-ties may round either way, so compare scores rank by rank,
          // each hit's score with its own cosine, and the id order within exact ties.
          const own = new Map(bruteForce(reference, query, reference.size).map((e) => [e.chunkId, e.score]));
          expect(hits).toHaveLength(expected.length);
          expect(new Set(ids(hits)).size).toBe(hits.length);
          for (const [i, hit] of hits.entries()) {
            expect(hit.score).toBeCloseTo(expected[i]!.score, 5);
            expect(hit.score).toBeCloseTo(own.get(hit.chunkId)!, 5);
            const next = hits[i + 1];
            if (next && next.score === hit.score) expect(next.chunkId > hit.chunkId).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('matches a brute-force search exactly on random real-valued vectors', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648 - 0.5;
    };
    const reference = new Map<string, number[]>();
    const index = new VectorIndex();
    for (let n = 0; n < 2000; n++) {
      const id = `chunk-${n.toString().padStart(4, '0')}`;
      const vector = Array.from({ length: 24 }, random);
      reference.set(id, vector);
      index.add(n % 2 === 0 ? 'even' : 'odd', [{ id, vector }]);
    }
    for (let q = 0; q < 20; q++) {
      const query = Array.from({ length: 24 }, random);
      const hits = index.search(['even', 'odd'], query, 15);
      const expected = bruteForce(reference, query, 15);
      expect(ids(hits)).toEqual(ids(expected));
      for (const [i, hit] of hits.entries()) expect(hit.score).toBeCloseTo(expected[i]!.score, 5);
    }
  });

  it('asks the filter only about contenders and still fills k', () => {
    const index = new VectorIndex();
    index.add(
      't',
      Array.from({ length: 10 }, (_, n) => ({ id: `c${n}`, vector: [1, n / 10] })),
    );
    const asked: string[] = [];
    const hits = index.search(['t'], [0, 1], 3, (id) => {
      asked.push(id);
      return !['c9', 'c8', 'c7'].includes(id);
    });
    expect(ids(hits)).toEqual(['c6', 'c5', 'c4']);
    expect(asked).toContain('c9');
    // Vectors come in increasing similarity, so everyone is a contender; still each is asked once at most.
    expect(new Set(asked).size).toBe(asked.length);
    expect(index.search(['t'], [0, 1], 3, () => false)).toEqual([]);
  });

  it('searches several keys together and ignores unknown ones', () => {
    const index = new VectorIndex();
    index.add('a', [{ id: 'a1', vector: [1, 0, 0] }]);
    index.add('b', [
      { id: 'b1', vector: [0.9, 0.1, 0] },
      { id: 'b2', vector: [0, 0, 1] },
    ]);
    expect(ids(index.search(['a', 'b', 'nope', 'a'], [1, 0, 0], 5))).toEqual(['a1', 'b1', 'b2']);
    expect(ids(index.search(['b'], [1, 0, 0], 5))).toEqual(['b1', 'b2']);
    expect(index.search(['nope'], [1, 0, 0], 5)).toEqual([]);
    expect(index.search([], [1, 0, 0], 5)).toEqual([]);
  });

  it('returns nothing for k of zero or less, and everything for a large k', () => {
    const index = new VectorIndex();
    index.add('t', [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
    ]);
    expect(index.search(['t'], [1, 0], 0)).toEqual([]);
    expect(index.search(['t'], [1, 0], -3)).toEqual([]);
    expect(index.search(['t'], [1, 0], Number.NaN)).toEqual([]);
    expect(ids(index.search(['t'], [1, 0], 1000))).toEqual(['a', 'b']);
    expect(ids(index.search(['t'], [1, 0], Number.POSITIVE_INFINITY))).toEqual(['a', 'b']);
  });

  it('stores zero vectors as zero and scores a zero query as zero', () => {
    const index = new VectorIndex();
    index.add('t', [
      { id: 'zero', vector: [0, 0] },
      { id: 'up', vector: [0, 1] },
      { id: 'down', vector: [0, -1] },
    ]);
    expect(index.search(['t'], [0, 1], 3)).toEqual([
      { chunkId: 'up', score: expect.closeTo(1, 6) },
      { chunkId: 'zero', score: 0 },
      { chunkId: 'down', score: expect.closeTo(-1, 6) },
    ]);
    expect(index.search(['t'], [0, 0], 3)).toEqual([
      { chunkId: 'down', score: 0 },
      { chunkId: 'up', score: 0 },
      { chunkId: 'zero', score: 0 },
    ]);
  });
});

describe('VectorIndex contents', () => {
  it('rejects vectors of the wrong dimension, leaving the key unchanged', () => {
    const index = new VectorIndex();
    index.add('t', [{ id: 'a', vector: [1, 2, 3] }]);
    expect(() => index.add('t', [{ id: 'b', vector: [1, 2] }])).toThrow(RangeError);
    expect(() =>
      index.add('t', [
        { id: 'c', vector: [1, 2, 3] },
        { id: 'd', vector: [1, 2, 3, 4] },
      ]),
    ).toThrow(RangeError);
    expect(() => index.add('u', [{ id: 'e', vector: [] }])).toThrow(RangeError);
    expect(() => index.add('t', [{ id: 'f', vector: [1, Number.NaN, 3] }])).toThrow(RangeError);
    expect(index.size('t')).toBe(1);
    expect(index.has('u')).toBe(false);
    expect(() => index.search(['t'], [1, 2], 1)).toThrow(RangeError);
    expect(() => index.search(['t'], [1, Number.POSITIVE_INFINITY, 2], 1)).toThrow(RangeError);
  });

  it('replaces a vector added again under the same id', () => {
    const index = new VectorIndex();
    index.add('t', [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
    ]);
    index.add('t', [{ id: 'a', vector: [0, 5] }]);
    expect(index.size('t')).toBe(2);
    expect(index.search(['t'], [0, 1], 2).map((hit) => hit.score)).toEqual([
      expect.closeTo(1, 6),
      expect.closeTo(1, 6),
    ]);
  });

  it('removes, drops and reports sizes', () => {
    const index = new VectorIndex();
    expect(index.has('t')).toBe(false);
    index.add('t', []);
    expect(index.has('t')).toBe(true);
    expect(index.size('t')).toBe(0);
    expect(index.dimensions('t')).toBeUndefined();
    index.add('t', [
      { id: 'a', vector: [1, 0, 0] },
      { id: 'b', vector: [0, 1, 0] },
      { id: 'c', vector: [0, 0, 1] },
    ]);
    expect(index.dimensions('t')).toBe(3);
    expect(index.remove('t', ['a', 'missing'])).toBe(1);
    expect(index.size('t')).toBe(2);
    // The last row moved into the hole must keep its own vector.
    expect(ids(index.search(['t'], [0, 0, 1], 1))).toEqual(['c']);
    expect(ids(index.search(['t'], [0, 1, 0], 1))).toEqual(['b']);
    expect(index.remove('other', ['b'])).toBe(0);
    expect(index.drop('t')).toBe(true);
    expect(index.has('t')).toBe(false);
    expect(index.size('t')).toBe(0);
    expect(index.drop('t')).toBe(false);
  });

  it('grows and shrinks its storage without losing vectors', () => {
    const index = new VectorIndex();
    const vectorOf = (n: number) => [Math.cos(n), Math.sin(n), n % 7, (n * 13) % 11];
    for (let start = 0; start < 1000; start += 7) {
      index.add(
        't',
        Array.from({ length: Math.min(7, 1000 - start) }, (_, i) => ({
          id: `c${start + i}`,
          vector: vectorOf(start + i),
        })),
      );
    }
    expect(index.size('t')).toBe(1000);
    for (const n of [0, 1, 499, 998, 999])
      expect(ids(index.search(['t'], vectorOf(n), 1))).toEqual([`c${n}`]);
    index.remove(
      't',
      Array.from({ length: 990 }, (_, n) => `c${n}`),
    );
    expect(index.size('t')).toBe(10);
    for (let n = 990; n < 1000; n++) expect(ids(index.search(['t'], vectorOf(n), 1))).toEqual([`c${n}`]);
  });
});

describe('VectorIndex bytes', () => {
  it('writes float32 little-endian', () => {
    expect([...VectorIndex.toBytes([1, -2.5])]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0]);
    expect(VectorIndex.toBytes([]).length).toBe(0);
  });

  it('reads back from any offset, as a copy', () => {
    const vector = Float32Array.from([0.1, -3, 1e-30, 65504.5]);
    const stored = Buffer.concat([Buffer.from([9]), VectorIndex.toBytes(vector)]);
    const unaligned = stored.subarray(1);
    const read = VectorIndex.fromBytes(unaligned);
    expect(read).toEqual(vector);
    unaligned.fill(0);
    expect(read).toEqual(vector);
    expect(() => VectorIndex.fromBytes(Buffer.alloc(6))).toThrow(RangeError);
    expect(VectorIndex.fromBytes(new Uint8Array(0))).toEqual(new Float32Array(0));
  });
});
