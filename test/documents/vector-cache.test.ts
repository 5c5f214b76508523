import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeService } from '../../src/modules/documents/knowledge-service.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { embedHashedNgrams } from '../../src/modules/llm/builtin/hashed-ngrams.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

const TEXTS = [
  'Parcels to Canada leave the warehouse on Mondays and arrive within a week.',
  'Refunds are paid to the original card within five working days.',
  'The loyalty programme gives one point per euro spent in the shop.',
];
const LATER = 'Gift cards never expire and can be spent on anything in the shop.';

interface Hit {
  chunkId: string;
  score: number;
}

/**
 * The in-process vector index follows the database: another process's service (here a second
 * KnowledgeService on the same database, which no write of the platform's tells anything) sees adds and
 * deletes on its next query, and a bound on memory drops topics without changing any answer.
 */
describe.each(await testDialects())('the vector cache on %s', (dialect) => {
  let p: TestPlatform;
  const ids: string[] = [];

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    for (const [i, content] of TEXTS.entries()) {
      const doc = await loaded(p, { source: 'text', content, topic: i === 2 ? 'other' : 'kb' });
      await processed(p, doc.documentId);
      ids.push(doc.documentId);
    }
  }, 60_000);
  afterAll(() => p?.close());

  const service = (maxBytes?: number) =>
    new KnowledgeService(
      new DocumentStore(p.ctx.db, p.dialect),
      async (texts) => ({
        vectors: texts.map((t) => Array.from(embedHashedNgrams(t))),
        model: 'builtin/hashed-ngrams',
      }),
      'builtin/hashed-ngrams',
      maxBytes,
    );
  const ask = async (s: KnowledgeService, text: string, topics: string[]): Promise<Hit[]> =>
    (await s.query(p.accountId, { query: text, topK: 10, topics, mode: 'vector' })).results.map((r) => ({
      chunkId: r.chunkId,
      score: r.score,
    }));
  /** The platform's own answer (its service is told of its writes). */
  const platformAsk = async (text: string, topics: string[]): Promise<Hit[]> => {
    const res = await query(p, { query: text, topK: 10, topics, mode: 'vector' });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { results: Hit[] }).results.map((r) => ({ chunkId: r.chunkId, score: r.score }));
  };

  it("sees another process's adds and deletes on its next query, with the same scores", async () => {
    const other = service();
    const before = await ask(other, 'gift cards in the shop', ['kb']);
    expect(before).toEqual(await platformAsk('gift cards in the shop', ['kb']));
    expect(before).toHaveLength(2);

    const doc = await loaded(p, { source: 'text', content: LATER, topic: 'kb' });
    await processed(p, doc.documentId);
    const added = await ask(other, 'gift cards in the shop', ['kb']);
    expect(added).toEqual(await platformAsk('gift cards in the shop', ['kb']));
    expect(added).toHaveLength(3);
    const [best] = (
      await p.ctx.db.selectFrom('chunks').select('id').where('document_id', '=', doc.documentId).execute()
    ).map((r) => r.id);
    expect(added[0]?.chunkId).toBe(best);

    expect((await p.request({ method: 'DELETE', url: `/api/documents/${ids[0]}` })).statusCode).toBe(204);
    const removed = await ask(other, 'parcels to Canada', ['kb']);
    expect(removed).toEqual(await platformAsk('parcels to Canada', ['kb']));
    expect(removed).toHaveLength(2);
  });

  it('drops the topics used least recently past its bound, and answers the same after', async () => {
    const bounded = service(1);
    const roomy = service();
    const a1 = await ask(bounded, 'refunds to the card', ['kb']);
    const b1 = await ask(bounded, 'loyalty points', ['other']);
    // One byte holds nothing: only the topic just loaded is kept.
    expect(bounded.vectorCacheHeld()).toBe(1);
    expect(await ask(bounded, 'refunds to the card', ['kb'])).toEqual(a1);
    expect(await ask(bounded, 'loyalty points', ['other'])).toEqual(b1);
    expect(a1).toEqual(await ask(roomy, 'refunds to the card', ['kb']));
    expect(b1).toEqual(await ask(roomy, 'loyalty points', ['other']));
    expect(roomy.vectorCacheHeld()).toBe(2);
    // Both topics in one query: each is loaded in turn and searched together.
    expect(await ask(bounded, 'shop', ['kb', 'other'])).toEqual(await ask(roomy, 'shop', ['kb', 'other']));
  });

  it('warms the most recently changed topics at start, within half its bound, and not once closed', async () => {
    const warm = service();
    expect(await warm.warm(20)).toBe(2);
    expect(warm.vectorCacheHeld()).toBe(2);
    // Warmed topics answer as loaded ones do.
    expect(await ask(warm, 'loyalty points', ['other'])).toEqual(
      await ask(service(), 'loyalty points', ['other']),
    );
    expect(warm.vectorCacheHeld()).toBe(2);
    // One topic at most: the next would not fit in half of a cache of one byte.
    const tight = service(1);
    expect(await tight.warm(20)).toBe(1);
    expect(tight.vectorCacheHeld()).toBe(1);
    const limited = service();
    expect(await limited.warm(1)).toBe(1);
    const closed = service();
    await closed.close();
    expect(await closed.warm(20)).toBe(0);
    expect(closed.vectorCacheHeld()).toBe(0);
  });
});
