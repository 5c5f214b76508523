import { describe, expect, it } from 'vitest';
import { ColumnArena } from './column-arena.js';
import { VectorIndex } from './vector-index.js';

const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648 - 0.5;
};

/** A row-major float32 dot product in 4 lanes (d mod 4), lanes summed as (0 + 1) + (2 + 3): SIMD's order. */
function laneDot(row: Float32Array, query: Float32Array): number {
  const lanes = new Float32Array(4);
  for (let d = 0; d < row.length; d++) lanes[d & 3] = lanes[d & 3]! + Math.fround(row[d]! * query[d]!);
  return Math.fround(Math.fround(lanes[0]! + lanes[1]!) + Math.fround(lanes[2]! + lanes[3]!));
}

describe('column arena', () => {
  it('scores each row bit for bit as a row-major 4-lane float32 dot product', () => {
    const rand = seeded(7);
    const dims = 12;
    const count = 37;
    const arena = ColumnArena.create(dims, 40);
    expect(arena).not.toBeNull();
    const rows = Array.from({ length: count }, () => Float32Array.from({ length: dims }, rand));
    for (const [r, row] of rows.entries()) for (let d = 0; d < dims; d++) arena!.data[d * 40 + r] = row[d]!;
    // Zeros in the query are skipped, as the index does.
    const query = Float32Array.from({ length: dims }, (_, d) => (d % 3 === 1 ? 0 : rand()));
    const nonZero = [...query.keys()].filter((d) => query[d] !== 0);
    const scores = [...arena!.score(query, nonZero, count)];
    expect(scores).toEqual(rows.map((row) => laneDot(row, query)));
    // A second query starts from clean lanes.
    expect([...arena!.score(query, nonZero, count)]).toEqual(scores);
  });

  it('is not made for a capacity that is not a multiple of 4', () => {
    expect(ColumnArena.create(8, 10)).toBeNull();
    expect(ColumnArena.create(0, 8)).toBeNull();
  });

  it('gives the index the same scores in WebAssembly (large keys) as in JavaScript (small ones)', () => {
    const rand = seeded(11);
    const vectors = Array.from({ length: 5_000 }, (_, i) => ({
      id: `c${String(i).padStart(4, '0')}`,
      vector: Array.from({ length: 16 }, rand),
    }));
    const large = new VectorIndex();
    large.add('t', vectors);
    const small = new VectorIndex();
    for (let i = 0; i < vectors.length; i += 1_000) small.add(`t${i}`, vectors.slice(i, i + 1_000));
    const smallKeys = [0, 1_000, 2_000, 3_000, 4_000].map((i) => `t${i}`);
    for (let q = 0; q < 5; q++) {
      const query = Array.from({ length: 16 }, (_, d) => (d % 4 === q % 4 ? 0 : rand()));
      expect(large.search(['t'], query, 25)).toEqual(small.search(smallKeys, query, 25));
    }
  });
});
