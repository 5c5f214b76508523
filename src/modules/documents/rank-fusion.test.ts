import { describe, expect, it } from 'vitest';
import { fuseRanks, fuseScores } from './rank-fusion.js';
import type { RankedChunk } from './types.js';

/** A best-first list from ids; the scores are irrelevant to fusion, so they are made up (and misleading). */
const list = (...ids: string[]): RankedChunk[] => ids.map((chunkId, i) => ({ chunkId, score: i * 100 }));

describe('fuseRanks', () => {
  it('sums reciprocal ranks across lists', () => {
    const fused = fuseRanks([list('a', 'b', 'c'), list('c', 'a', 'd')]);
    expect(fused.map((f) => f.chunkId)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[0]).toEqual({ chunkId: 'a', score: 1 / 61 + 1 / 62, ranks: [1, 2] });
    expect(fused[1]).toEqual({ chunkId: 'c', score: 1 / 63 + 1 / 61, ranks: [3, 1] });
    expect(fused[2]).toEqual({ chunkId: 'b', score: 1 / 62, ranks: [2, null] });
    expect(fused[3]).toEqual({ chunkId: 'd', score: 1 / 63, ranks: [null, 3] });
  });

  it('uses the given constant', () => {
    const fused = fuseRanks([list('x', 'y'), list('y')], 1);
    expect(fused).toEqual([
      { chunkId: 'y', score: 1 / 3 + 1 / 2, ranks: [2, 1] },
      { chunkId: 'x', score: 1 / 2, ranks: [1, null] },
    ]);
    // With k = 0 a first place counts fully.
    expect(fuseRanks([list('x')], 0)).toEqual([{ chunkId: 'x', score: 1, ranks: [1] }]);
  });

  it('orders equal scores by chunk id', () => {
    const fused = fuseRanks([list('m', 'b'), list('b', 'm'), list('z'), list('a')]);
    expect(fused.map((f) => [f.chunkId, f.ranks])).toEqual([
      ['b', [2, 1, null, null]],
      ['m', [1, 2, null, null]],
      ['a', [null, null, null, 1]],
      ['z', [null, null, 1, null]],
    ]);
    expect(fused[0]!.score).toBe(fused[1]!.score);
    expect(fused[2]!.score).toBe(fused[3]!.score);
  });

  it('gives the same result whatever the order of the lists', () => {
    const one = list('a', 'b', 'c', 'd');
    const two = list('d', 'c', 'e');
    const three = list('e', 'a');
    const strip = (lists: RankedChunk[][]) =>
      fuseRanks(lists).map(({ chunkId, score }) => ({ chunkId, score }));
    expect(strip([one, two, three])).toEqual(strip([three, one, two]));
  });

  it('counts a chunk listed twice in one list once, at its better rank', () => {
    expect(fuseRanks([list('a', 'b', 'a')])).toEqual([
      { chunkId: 'a', score: 1 / 61, ranks: [1] },
      { chunkId: 'b', score: 1 / 62, ranks: [2] },
    ]);
  });

  it('handles empty input', () => {
    expect(fuseRanks([])).toEqual([]);
    expect(fuseRanks([[], []])).toEqual([]);
    expect(fuseRanks([[], list('a')])).toEqual([{ chunkId: 'a', score: 1 / 61, ranks: [null, 1] }]);
  });

  it('rejects a negative or non-finite constant', () => {
    expect(() => fuseRanks([list('a')], -1)).toThrow(RangeError);
    expect(() => fuseRanks([list('a')], Number.NaN)).toThrow(RangeError);
  });
});

describe('fuseScores', () => {
  it('scales each list by its best and weighs it: a clear winner of the heavier list stays first', () => {
    const keyword = [
      { chunkId: 'a', score: 9 },
      { chunkId: 'b', score: 3 },
      { chunkId: 'c', score: 1 },
    ];
    const vector = [
      { chunkId: 'c', score: 0.52 },
      { chunkId: 'b', score: 0.51 },
      { chunkId: 'a', score: 0.5 },
    ];
    const fused = fuseScores([keyword, vector], [1, 0.3]);
    // a: 1 + 0.3 × 0.5/0.52; b: 1/3 + 0.3 × 0.51/0.52; c: 1/9 + 0.3.
    expect(fused.map((f) => f.chunkId)).toEqual(['a', 'b', 'c']);
    expect(fused[0]!.score).toBeCloseTo(1 + (0.3 * 0.5) / 0.52, 9);
    expect(fused[0]!.ranks).toEqual([1, 3]);
    expect(fused[1]!.score).toBeCloseTo(1 / 3 + (0.3 * 0.51) / 0.52, 9);
    // Weight 0 leaves the order of the other list.
    expect(fuseScores([keyword, vector], [0, 1]).map((f) => f.chunkId)).toEqual(['c', 'b', 'a']);
  });

  it('keeps near-ties near: the worst of a list is not stretched to 0', () => {
    // Min-max scaling made c (0.50) worth nothing next to b (0.52), and b overtook a keyword lead.
    const keyword = [
      { chunkId: 'c', score: 10 },
      { chunkId: 'b', score: 9 },
    ];
    const vector = [
      { chunkId: 'b', score: 0.52 },
      { chunkId: 'c', score: 0.5 },
    ];
    expect(fuseScores([keyword, vector], [1, 1]).map((f) => f.chunkId)).toEqual(['c', 'b']);
  });

  it('gives a list of one full marks, a best of 0 or less nothing, and refuses bad weights', () => {
    expect(fuseScores([[{ chunkId: 'x', score: 0.1 }], []], [0.5, 1])).toEqual([
      { chunkId: 'x', score: 0.5, ranks: [1, null] },
    ]);
    expect(fuseScores([[{ chunkId: 'y', score: -0.2 }]], [1])).toEqual([
      { chunkId: 'y', score: 0, ranks: [1] },
    ]);
    expect(() => fuseScores([[]], [-1])).toThrow(RangeError);
    expect(() => fuseScores([[], []], [1])).toThrow(RangeError);
  });
});
