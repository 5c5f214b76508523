import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeService } from '../../src/modules/documents/knowledge-service.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

const OWLS = `# Owls

The barn owl hunts voles over meadows at night. Its heart-shaped face gathers sound like a dish.

## Pellets

An owl swallows prey whole and coughs up pellets of fur and bone a few hours later.`;

type Results = { results: Array<{ documentId: string; chunkId: string; text: string }> };

/**
 * Processing a document that is already indexed again (new chunk ids, same text) keeps it searchable
 * in every mode, whether or not a query held its topic in between, and with the clock standing still
 * (the test clock does not move: the document's `updated_at` is the same before and after).
 */
describe.each(await testDialects())('processing an indexed document again on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(() => p?.close());

  const search = async (topic: string, mode: string) => {
    const res = await query(p, { query: 'owl pellets fur bone', mode, topK: 5, topics: [topic] });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as Results).results;
  };

  for (const between of [true, false]) {
    it(`stays searchable (${between ? 'queried' : 'not queried'} while it is processed again)`, async () => {
      const topic = `owls-${between ? 'queried' : 'quiet'}`;
      const doc = await loaded(p, { source: 'markdown', content: OWLS, topic });
      expect((await processed(p, doc.documentId)).status).toBe('indexed');
      const before = await search(topic, 'hybrid');
      expect(before.map((r) => r.documentId)).toContain(doc.documentId);

      const done = processed(p, doc.documentId);
      // Queries while the chunks are rewritten: each answers (the document or nothing), never an error.
      if (between) for (let i = 0; i < 5; i++) await search(topic, 'hybrid');
      const again = await done;
      expect(again.status).toBe('indexed');

      for (const mode of ['keyword', 'vector', 'hybrid']) {
        const results = await search(topic, mode);
        expect(
          results.map((r) => r.documentId),
          mode,
        ).toContain(doc.documentId);
        // The chunks found are the current ones (the old ids are gone from the database).
        const chunks = await p.request({ method: 'GET', url: `/api/documents/${doc.documentId}/chunks` });
        const ids = new Set(
          (chunks.json() as { data: Array<{ chunkId: string }> }).data.map((c) => c.chunkId),
        );
        for (const r of results) expect(ids.has(r.chunkId), mode).toBe(true);
      }
    });
  }

  it('stays searchable for another process that held its topic (its cache sees the new chunks)', async () => {
    const topic = 'owls-elsewhere';
    const doc = await loaded(p, { source: 'markdown', content: OWLS, topic });
    expect((await processed(p, doc.documentId)).status).toBe('indexed');
    // A second server on the same database: its own knowledge cache, no word of this one's ingests.
    const elsewhere = new KnowledgeService(
      new DocumentStore(p.ctx.db, p.dialect),
      async () => {
        throw new Error('keyword queries embed nothing');
      },
      'builtin/hashed-ngrams',
    );
    try {
      const ask = async () =>
        (
          await elsewhere.query(p.accountId, {
            query: 'owl pellets',
            topK: 5,
            mode: 'keyword',
            topics: [topic],
          })
        ).results;
      const held = (await ask()).length;
      expect(held).toBeGreaterThan(0);
      expect((await processed(p, doc.documentId)).status).toBe('indexed');
      const after = await ask();
      expect(after.length).toBe(held);
      expect(new Set(after.map((r) => r.documentId))).toEqual(new Set([doc.documentId]));
    } finally {
      await elsewhere.close();
    }
  });
});
