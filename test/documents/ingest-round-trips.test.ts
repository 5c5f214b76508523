import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountPrincipal } from '../../src/core/auth/principal.js';
import { cpuPoolOf } from '../../src/core/cpu/index.js';
import { loadBetterSqlite, sqliteDriverName } from '../../src/core/db/sqlite-driver.js';
import { DocumentCpu } from '../../src/modules/documents/document-cpu.js';
import { DocumentProcessor, type Embedder } from '../../src/modules/documents/processor.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { type DocView, loaded, processed, query } from './support.js';

const OWLS = `# Owls

The barn owl hunts voles over meadows at night. Its heart-shaped face gathers sound like a dish.

## Pellets

An owl swallows prey whole and coughs up pellets of fur and bone a few hours later. Biologists pull the
pellets apart to learn what the owl ate: skulls of voles, shrews and mice.

## Nests

Barn owls nest in old barns, church towers and hollow trees, and use the same site year after year.`;

/** Statements either database driver sends while `work` runs (BEGIN and COMMIT included). */
/** Tables only the platform's batched logs write (flushed by a timer, whenever it fires). */
const LOG_TABLES = /"?(llm_requests|llm_usage_daily|request_logs|usage_daily)"?/;

/**
 * The statements `work` sends, per connection, leaving out the logs' flushes: a timer flushes the
 * request and usage logs every second, and one that fires during `work` is not `work`'s. A flush is a
 * transaction (BEGIN … COMMIT on one connection) that writes a log table; it is dropped whole.
 */
function countOutsideLogFlushes(perConnection: Iterable<string[]>): number {
  let n = 0;
  for (const texts of perConnection) {
    let open: string[] | null = null;
    for (const text of texts) {
      const word = text.trim().toLowerCase();
      if (word === 'begin' || word.startsWith('begin ')) {
        open = [text];
        continue;
      }
      if (open) {
        open.push(text);
        if (word === 'commit' || word === 'rollback') {
          if (!open.some((t) => LOG_TABLES.test(t))) n += open.length;
          open = null;
        }
      } else if (!LOG_TABLES.test(text)) n++;
    }
    if (open) n += open.length;
  }
  return n;
}

async function counted(work: () => Promise<void>): Promise<number> {
  const sent = new Map<object, string[]>();
  const note = (connection: object, text: unknown) => {
    const list = sent.get(connection) ?? [];
    list.push(typeof text === 'string' ? text : String((text as { text?: string })?.text ?? ''));
    sent.set(connection, list);
  };
  const pgQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    note(this, args[0]);
    return (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pgQuery;
  // SQLite statements are prepared once and kept (src/core/db/database.ts): their runs are counted, on
  // whichever driver this Node runs the platform with (better-sqlite3 on Node 20, node:sqlite after).
  // One connection: its statements are one list.
  let close: () => void = () => {};
  let statement: Record<string, (...args: unknown[]) => unknown>;
  if (sqliteDriverName() === 'node:sqlite') {
    statement = (await import('node:sqlite')).StatementSync.prototype as unknown as typeof statement;
  } else {
    const scratch = new (await loadBetterSqlite())(':memory:');
    statement = Object.getPrototypeOf(scratch.prepare('select 1')) as typeof statement;
    close = () => scratch.close();
  }
  const sqlite = {};
  const originals = new Map(['run', 'get', 'all', 'iterate'].map((m) => [m, statement[m]!]));
  for (const [method, original] of originals)
    statement[method] = function (this: { source?: string; sourceSQL?: string }, ...args: unknown[]) {
      note(sqlite, this.source ?? this.sourceSQL ?? '');
      return original.apply(this, args);
    };
  try {
    await work();
  } finally {
    pg.Client.prototype.query = pgQuery;
    for (const [method, original] of originals) statement[method] = original;
    close();
  }
  return countOutsideLogFlushes(sent.values());
}

describe.each(await testDialects())('processing a small document in few statements on %s', (dialect) => {
  let p: TestPlatform;
  let store: DocumentStore;
  let processor: DocumentProcessor;
  /** The platform's embeddings, as the documents module asks for them. */
  let embed: Embedder;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    const llm = p.ctx.apis.llm!;
    embed = async (texts, model, payer) => {
      const call = {
        principal: accountPrincipal(payer.accountId),
        endpoint: 'documents.embed',
        stream: false,
        signal: new AbortController().signal,
      };
      const answer = await llm.gateway.embed(call, model, texts);
      return { vectors: answer.embeddings, model: answer.model.name };
    };
    store = new DocumentStore(p.ctx.db, dialect);
    // The platform's own store and CPU pool; only the processor is this test's, run by hand.
    processor = processorWith(embed);
  });
  afterAll(() => p?.close());

  /** Records a chunk-embed-index job on the document as the process route does. */
  const queued = async (documentId: string, embeddingModel = 'builtin/hashed-ngrams') => {
    const job = {
      documentId,
      accountId: p.accountId,
      operations: ['chunk' as const, 'embed' as const, 'index' as const],
      chunkSize: 200,
      chunkOverlap: 0,
      embeddingModel,
      payerKeyId: null,
    };
    await store.markProcessing(p.accountId, documentId, JSON.stringify(job), p.clock.now().toISOString());
    return job;
  };
  /** A processor of this test's, on the platform's store and CPU pool, embedding through `embedder`. */
  const processorWith = (embedder: Embedder) =>
    new DocumentProcessor(
      store,
      new DocumentCpu({ pool: cpuPoolOf(p.ctx), timeoutMs: 30_000 }),
      embedder,
      p.clock,
      () => undefined,
    );
  /** Records the job, then runs it here, counted. */
  const run = async (documentId: string, embeddingModel?: string) => {
    const job = await queued(documentId, embeddingModel);
    return counted(() => processor.handle(job));
  };
  const view = async (id: string) =>
    (
      await p.request({
        method: 'GET',
        url: `/api/documents/${id}?fields=status,processing,error,chunkCount,embeddingModel`,
      })
    ).json() as DocView;
  const chunks = async (id: string) =>
    (
      (await p.request({ method: 'GET', url: `/api/documents/${id}/chunks` })).json() as {
        data: Array<{ chunkId: string; text: string; embeddingModel: string | null }>;
      }
    ).data;

  it('chunk, embed and index again: a few statements, the chunks replaced whole, searchable', async () => {
    const doc = await loaded(p, { source: 'markdown', content: OWLS, topic: 'owls' });
    expect((await processed(p, doc.documentId, { chunkSize: 120, chunkOverlap: 0 })).status).toBe('indexed');
    const before = await chunks(doc.documentId);

    const statements = await run(doc.documentId);
    // The row, the pages, then BEGIN, two deletes, two inserts, the row's update, COMMIT: 9.
    expect(statements).toBeLessThanOrEqual(10);
    // Counted at all, on this Node's driver.
    expect(statements).toBeGreaterThanOrEqual(5);

    const after = await view(doc.documentId);
    expect(after).toMatchObject({
      status: 'indexed',
      processing: false,
      error: null,
      embeddingModel: 'builtin/hashed-ngrams',
    });
    const now = await chunks(doc.documentId);
    expect(now.length).toBe(after.chunkCount);
    expect(now.length).toBeGreaterThan(1);
    expect(now.length).toBeLessThan(before.length);
    expect(now.every((c) => c.embeddingModel === 'builtin/hashed-ngrams')).toBe(true);
    expect(now.some((c) => before.some((b) => b.chunkId === c.chunkId))).toBe(false);
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      const res = await query(p, { query: 'owl pellets fur bone', mode, topK: 3, topics: ['owls'] });
      const found = (res.json() as { results: Array<{ chunkId: string }> }).results;
      expect(found.length, mode).toBeGreaterThan(0);
      for (const r of found)
        expect(
          now.map((c) => c.chunkId),
          mode,
        ).toContain(r.chunkId);
    }
  });

  it('an embedding that fails leaves what the step-by-step way left: the new chunks, no vectors, failed', async () => {
    const doc = await loaded(p, { source: 'markdown', content: `${OWLS}\n\nA second copy.`, topic: 'owls' });
    expect((await processed(p, doc.documentId, { chunkSize: 120, chunkOverlap: 0 })).status).toBe('indexed');
    const before = await chunks(doc.documentId);

    await run(doc.documentId, 'no-such-model');
    const after = await view(doc.documentId);
    expect(after).toMatchObject({ status: 'failed', processing: false, embeddingModel: null });
    expect(after.error).toMatch(/no-such-model/);
    const now = await chunks(doc.documentId);
    expect(now.length).toBe(after.chunkCount);
    expect(now.every((c) => c.embeddingModel === null)).toBe(true);
    expect(now.some((c) => before.some((b) => b.chunkId === c.chunkId))).toBe(false);
    // Out of search: a failed document is not indexed.
    const res = await query(p, { query: 'second copy', mode: 'keyword', topK: 10, topics: ['owls'] });
    const ids = new Set(now.map((c) => c.chunkId));
    for (const r of (res.json() as { results: Array<{ chunkId: string }> }).results)
      expect(ids.has(r.chunkId)).toBe(false);
  });

  it('a request made while the job ran is honoured by one more run (the job is not ended under it)', async () => {
    const doc = await loaded(p, { source: 'markdown', content: `${OWLS}\n\nA third copy.`, topic: 'owls' });
    const job = await queued(doc.documentId);
    // An embedder that records a newer request (other parameters) while the first run embeds.
    let runs = 0;
    const racing = processorWith(async (texts, model, payer) => {
      if (runs++ === 0)
        await store.markProcessing(
          p.accountId,
          doc.documentId,
          JSON.stringify({ ...job, chunkSize: 100 }),
          p.clock.now().toISOString(),
        );
      return embed(texts, model, payer);
    });
    await racing.handle(job);
    expect(runs).toBe(2);
    const after = await view(doc.documentId);
    expect(after).toMatchObject({ status: 'indexed', processing: false });
    // The second run's chunks (100 characters at most).
    const now = await chunks(doc.documentId);
    expect(now.length).toBe(after.chunkCount);
    expect(now.every((c) => c.text.length <= 100)).toBe(true);
  });

  it('a document deleted while it is embedded takes no vectors after: nothing of it is left', async () => {
    // Two embedding batches at least (256 chunks each): written a batch per transaction.
    const content = Array.from(
      { length: 1500 },
      (_, i) => `Owl note ${i}: the barn owl ${i} hunts voles.`,
    ).join('\n\n');
    const doc = await loaded(p, { source: 'markdown', content, topic: 'owls-deleted' });
    const job = await queued(doc.documentId);
    let calls = 0;
    let batch = 0;
    let deleted = 0;
    const deleting = processorWith(async (texts, model, payer) => {
      calls++;
      batch = texts.length;
      // The owner deletes it while its first batch is with the model.
      if (calls === 1)
        deleted = (await p.request({ method: 'DELETE', url: `/api/documents/${doc.documentId}` })).statusCode;
      return embed(texts, model, payer);
    });
    await deleting.handle(job);
    expect(deleted).toBe(204);
    expect(calls).toBe(1);
    // A whole batch: the document was written a batch per transaction, not in one.
    expect(batch).toBe(256);
    expect((await p.request({ method: 'GET', url: `/api/documents/${doc.documentId}` })).statusCode).toBe(
      404,
    );
    const left = await p.ctx.db
      .selectFrom('chunk_vectors')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('document_id', '=', doc.documentId)
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
    const chunksLeft = await p.ctx.db
      .selectFrom('chunks')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('document_id', '=', doc.documentId)
      .executeTakeFirstOrThrow();
    expect(Number(chunksLeft.n)).toBe(0);
  });
});
