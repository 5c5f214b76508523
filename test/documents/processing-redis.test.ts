import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable, uniqueName } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

/** With REDIS_URL the processing jobs go through BullMQ; the document ends the same way. */
describe.runIf(await redisAvailable())('document processing on the BullMQ queue', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', redis: true, env: { QUEUE_PREFIX: uniqueName('q') } });
  });
  afterAll(() => p?.close());

  it('processes a document through Redis and it becomes searchable', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'The ferry to the island leaves every hour on the hour.',
      topic: 'redis',
    });
    const done = await processed(p, doc.documentId);
    expect(done).toMatchObject({ status: 'indexed', error: null });
    const res = (await query(p, { query: 'ferry island', topics: ['redis'] })).json() as {
      results: Array<{ documentId: string }>;
    };
    expect(res.results[0]?.documentId).toBe(doc.documentId);
    // The same document again (the job id repeats): processed again, not ignored.
    const again = await processed(p, doc.documentId, { chunkSize: 50, chunkOverlap: 0 });
    expect(again.chunkCount).toBeGreaterThan(done.chunkCount);
  });
});
