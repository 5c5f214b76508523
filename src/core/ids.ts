import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulidx';

/**
 * ulidx draws one random byte per character by default (16 crypto calls per id); a pooled buffer
 * gives the same cryptographic randomness for a fraction of the cost on hot paths.
 */
const pool = new Uint8Array(4096);
let cursor = pool.length;
function pooledRandom(): number {
  if (cursor >= pool.length) {
    randomFillSync(pool);
    cursor = 0;
  }
  return (pool[cursor++] as number) / 256;
}

const ulid = monotonicFactory(pooledRandom);

/** Prefixed, time-sortable ids (`key_01JD…`): lexical order is creation order, so lists page by key. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

/**
 * An id as `newId` makes it, for something that happened at `ms` (a log row written after its
 * request): the same monotonic sequence, so ids made in order of their events sort in that order.
 */
export function newIdAt(prefix: string, ms: number): string {
  return `${prefix}_${ulid(ms).toLowerCase()}`;
}
