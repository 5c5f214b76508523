import { describe, expect, it } from 'vitest';
import type { DocumentStore } from './store.js';
import { VectorCache } from './vector-cache.js';
import { VectorIndex } from './vector-index.js';

/** A topic of `chunks` chunks of one document, each with a 64-float vector and a few terms. */
interface FakeTopic {
  account: string;
  topic: string;
  chunks: number;
}

/** The three reads the cache makes, over topics held in memory; counts the chunk pages read per topic. */
function fakeStore(topics: FakeTopic[]) {
  const reads = new Map<string, number>();
  const docOf = (t: FakeTopic) => `${t.account}/${t.topic}`;
  const find = (account: string, topic: string) =>
    topics.find((t) => t.account === account && t.topic === topic);
  const vector = VectorIndex.toBytes(Array.from({ length: 64 }, (_, i) => (i % 7) + 1));
  const store = {
    topicVersion: async (account: string, topic: string) => `${find(account, topic)?.chunks ?? 0}`,
    indexedDocuments: async (account: string, topic: string) => {
      const t = find(account, topic);
      return t ? [{ id: docOf(t), revision: 1, updatedAt: 'v1', chunkCount: t.chunks, model: 'm' }] : [];
    },
    indexedChunks: async (documentId: string, after: number, limit: number) => {
      const t = topics.find((x) => docOf(x) === documentId)!;
      reads.set(documentId, (reads.get(documentId) ?? 0) + 1);
      const rows = [];
      for (let i = after + 1; i < Math.min(t.chunks, after + 1 + limit); i++)
        rows.push({
          id: `${documentId}#${i}`,
          terms: `word${i % 50} common`,
          embedding: vector,
          embedding_model: 'm',
        });
      if (rows.length === 0) return { last: null, rows: [] };
      return { last: after + rows.length, rows, more: after + 1 + rows.length < t.chunks };
    },
  };
  return { store: store as unknown as DocumentStore, reads };
}

/** Loads each topic as a query would (pinned while it runs, released after). */
async function use(cache: VectorCache, account: string, topic: string): Promise<void> {
  const release = cache.pin([cache.key(account, topic)]);
  try {
    await cache.ensure(account, topic);
  } finally {
    release();
  }
}

describe('the vector cache: a fair share per account', () => {
  const topics: FakeTopic[] = [
    { account: 'b', topic: 'hot', chunks: 200 },
    ...Array.from({ length: 6 }, (_, i) => ({ account: 'a', topic: `t${i}`, chunks: 200 })),
  ];

  /** Bytes one 200-chunk topic takes, measured on a roomy cache. */
  async function topicBytes(): Promise<number> {
    const cache = new VectorCache(fakeStore(topics).store, 1e12);
    await use(cache, 'b', 'hot');
    return cache.bytes();
  }

  it("an account filling the cache does not evict another account's hot topic", async () => {
    const one = await topicBytes();
    // Room for four topics; one account may hold half of it (two topics) once it is full.
    const { store, reads } = fakeStore(topics);
    const cache = new VectorCache(store, one * 4.5, 0.5);
    await use(cache, 'b', 'hot');
    for (let round = 0; round < 3; round++) for (let i = 0; i < 6; i++) await use(cache, 'a', `t${i}`);
    await use(cache, 'b', 'hot');
    // B's topic was read once: never dropped while A cycled through six topics.
    expect(reads.get('b/hot')).toBe(1);
    expect(cache.bytes()).toBeLessThanOrEqual(one * 4.5);
  });

  it('without a share, the least recently used topic goes whoever holds it (the unfair case this guards)', async () => {
    const one = await topicBytes();
    const { store, reads } = fakeStore(topics);
    const cache = new VectorCache(store, one * 4.5, 1);
    await use(cache, 'b', 'hot');
    for (let i = 0; i < 6; i++) await use(cache, 'a', `t${i}`);
    await use(cache, 'b', 'hot');
    expect(reads.get('b/hot')).toBe(2);
  });

  it('an account may use free room past its share, and its own topics go first when others need it', async () => {
    const one = await topicBytes();
    const { store, reads } = fakeStore(topics);
    const cache = new VectorCache(store, one * 4.5, 0.25);
    for (let i = 0; i < 4; i++) await use(cache, 'a', `t${i}`);
    // Four topics fit: A holds them all though its share is one.
    expect(cache.held()).toBe(4);
    await use(cache, 'b', 'hot');
    // B's topic took the room of A's least recently used one, not of a more recent one.
    expect(cache.held()).toBe(4);
    await use(cache, 'a', 't3');
    expect(reads.get('a/t3')).toBe(1);
    await use(cache, 'a', 't0');
    expect(reads.get('a/t0')).toBe(2);
    expect(reads.get('b/hot')).toBe(1);
    await use(cache, 'b', 'hot');
    expect(reads.get('b/hot')).toBe(1);
  });

  it("a topic larger than its account's share is served, then dropped rather than another account's", async () => {
    const one = await topicBytes();
    const big: FakeTopic[] = [...topics, { account: 'a', topic: 'big', chunks: 800 }];
    const { store, reads } = fakeStore(big);
    const cache = new VectorCache(store, one * 4.5, 0.5);
    await use(cache, 'b', 'hot');
    await use(cache, 'a', 't0');
    await use(cache, 'a', 't1');
    await use(cache, 'a', 't2');
    const release = cache.pin([cache.key('a', 'big')]);
    await cache.ensure('a', 'big');
    // Held while its query runs (past the bound), and A's smaller topics made room first.
    expect(cache.bytes()).toBeGreaterThan(one * 4);
    release();
    expect(cache.bytes()).toBeLessThanOrEqual(one * 4.5);
    await use(cache, 'b', 'hot');
    expect(reads.get('b/hot')).toBe(1);
  });
});
