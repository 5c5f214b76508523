import { describe, expect, it } from 'vitest';
import { DotArena } from './simd-dot.js';
import { VectorIndex } from './vector-index.js';

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

describe('SIMD dot products', () => {
  it('agree with a plain loop', () => {
    const dims = 384;
    const rows = 500;
    const arena = DotArena.create(dims, rows);
    expect(arena).not.toBeNull();
    const rand = seeded(7);
    for (let i = 0; i < rows * dims; i++) (arena as DotArena).data[i] = rand();
    const query = Float32Array.from({ length: dims }, () => rand());
    const scores = (arena as DotArena).score(query, rows);
    expect(scores).toHaveLength(rows);
    for (let r = 0; r < rows; r++) {
      let expected = 0;
      for (let i = 0; i < dims; i++) expected += (arena as DotArena).data[r * dims + i]! * query[i]!;
      expect(scores[r]).toBeCloseTo(expected, 4);
    }
  });

  it('is not used for dimensions that are not a multiple of 4 (the index scans in JS)', () => {
    expect(DotArena.create(6, 10)).toBeNull();
    const index = new VectorIndex();
    index.add('t', [
      { id: 'a', vector: [1, 0, 0, 0, 0, 0] },
      { id: 'b', vector: [0, 1, 0, 0, 0, 0] },
    ]);
    expect(index.search(['t'], [0, 1, 0, 0, 0, 0], 1)).toEqual([{ chunkId: 'b', score: 1 }]);
  });

  it('the index gives the same ranking through SIMD as the JS scan', () => {
    const rand = seeded(11);
    const vectors = Array.from({ length: 300 }, (_, i) => ({
      id: `c${String(i).padStart(3, '0')}`,
      vector: Array.from({ length: 8 }, () => rand()),
    }));
    const simd = new VectorIndex();
    simd.add('t', vectors);
    // 9 dimensions (one zero added) cannot use SIMD: the same vectors scanned in JS.
    const plain = new VectorIndex();
    plain.add(
      't',
      vectors.map((v) => ({ id: v.id, vector: [...v.vector, 0] })),
    );
    const query = Array.from({ length: 8 }, () => rand());
    const a = simd.search(['t'], query, 20).map((r) => r.chunkId);
    const b = plain.search(['t'], [...query, 0], 20).map((r) => r.chunkId);
    expect(a).toEqual(b);
  });
});
