/**
 * Reciprocal-rank fusion: merges ranked lists (keyword, vector…) by rank alone, so scores on different
 * scales never need to be compared. A chunk scores Σ 1/(k + rank) over the lists it appears in.
 */
import type { RankedChunk } from './types.js';

export interface FusedChunk {
  chunkId: string;
  score: number;
  /** The chunk's 1-based rank in each input list, or null where it is absent. */
  ranks: (number | null)[];
}

/**
 * Fuses `lists` (each best first) with the usual constant `k` = 60; results are sorted by score descending,
 * then chunk id ascending. A chunk listed twice in one list counts once, at its better rank. `weights`
 * (one per list, 1 each by default) scale each list's contribution: weighted reciprocal-rank fusion.
 */
export function fuseRanks(lists: RankedChunk[][], k = 60, weights?: readonly number[]): FusedChunk[] {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`the fusion constant must be 0 or more, not ${k}`);
  if (weights && (weights.length !== lists.length || weights.some((w) => !Number.isFinite(w) || w < 0)))
    throw new RangeError('fusion weights must be one finite number of 0 or more per list');
  const fused = new Map<string, FusedChunk>();
  for (const [list, hits] of lists.entries()) {
    for (const [position, { chunkId }] of hits.entries()) {
      let entry = fused.get(chunkId);
      if (!entry) {
        entry = { chunkId, score: 0, ranks: lists.map(() => null) };
        fused.set(chunkId, entry);
      }
      if (entry.ranks[list] !== null) continue;
      entry.ranks[list] = position + 1;
    }
  }
  // Sum in list order once ranks are known, so the floating-point result never depends on map order.
  for (const entry of fused.values()) {
    for (const [list, rank] of entry.ranks.entries())
      if (rank !== null) entry.score += (weights?.[list] ?? 1) / (k + rank);
  }
  return [...fused.values()].sort(
    (a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0),
  );
}

/**
 * Normalised score fusion: each list's scores are divided by its best (a best of 0 or less gives 0; a
 * negative score counts 0), then a chunk scores Σ weight × scaled score over the lists it is in. Unlike
 * rank fusion it keeps how far apart the hits of a list are: a clear keyword winner stays ahead of a
 * vector list of near-ties. Scaled by the best alone, not to [best, worst]: min-max scaling stretched a
 * list of near-ties (cosines 0.52 / 0.51 / 0.50) to 1 / 0.5 / 0, as decisive as BM25's real gaps, and
 * that cost the hybrid mode its lead over keyword search (docs/decisions.md). Sorted by score
 * descending, then chunk id; `ranks` as in `fuseRanks`.
 */
export function fuseScores(lists: RankedChunk[][], weights: readonly number[]): FusedChunk[] {
  if (weights.length !== lists.length || weights.some((w) => !Number.isFinite(w) || w < 0))
    throw new RangeError('fusion weights must be one finite number of 0 or more per list');
  const fused = new Map<string, FusedChunk>();
  for (const [list, hits] of lists.entries()) {
    if (hits.length === 0) continue;
    let best = -Infinity;
    for (const h of hits) best = Math.max(best, h.score);
    for (const [position, { chunkId, score }] of hits.entries()) {
      let entry = fused.get(chunkId);
      if (!entry) {
        entry = { chunkId, score: 0, ranks: lists.map(() => null) };
        fused.set(chunkId, entry);
      }
      if (entry.ranks[list] !== null) continue;
      entry.ranks[list] = position + 1;
      entry.score += weights[list]! * (best > 0 ? Math.max(0, score) / best : 0);
    }
  }
  return [...fused.values()].sort(
    (a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0),
  );
}
