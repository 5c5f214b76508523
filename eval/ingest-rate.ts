/**
 * `npx tsx eval/ingest-rate.ts`: the knowledge base's ingest rate without the whole bench — the bench's
 * synthetic documents (bench/knowledge-corpus.js: ~33,000 characters, ~100 chunks of ≤ 500 characters
 * each) loaded, processed and polled through the API of a platform in this process, `INGEST_IN_FLIGHT`
 * (4) at a time like `BENCH_ONLY=knowledge`, then one more document alone to count the SQL statements
 * its load and its processing cost (from the process request to its end, the client's polls left out;
 * background work of that time, such as the cache catching up, included).
 *
 * `EVAL_DIALECT=postgres` runs on PostgreSQL (the test database), else SQLite in memory;
 * `INGEST_DOCUMENTS` (40) documents. Prints chunks per second, statements per document and the load
 * average at the start and the end.
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { corpusDocument, vocabulary } from '../bench/knowledge-corpus.js';
import { createTestPlatform, type TestPlatform } from '../test/helpers/platform.js';

const DOCUMENTS = Number(process.env.INGEST_DOCUMENTS ?? 40);
const IN_FLIGHT = Number(process.env.INGEST_IN_FLIGHT ?? 4);
const DOC_CHARS = 33_000;
const CHUNK_SIZE = 500;
const CHUNK_OVERLAP = 50;
const TOPIC = 'ingest-rate';

// Every statement either driver runs, counted (BEGIN and COMMIT included).
let statements = 0;
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return (pgQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
// SQLite statements are prepared once and kept (src/core/db/database.ts): their runs are counted.
const statementProto = Object.getPrototypeOf(new Database(':memory:').prepare('select 1')) as Record<
  string,
  (...args: unknown[]) => unknown
>;
for (const method of ['run', 'get', 'all', 'iterate']) {
  const original = statementProto[method]!;
  statementProto[method] = function (this: unknown, ...args: unknown[]) {
    statements++;
    return original.apply(this, args);
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function ok<T>(p: TestPlatform, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<T> {
  const res = await p.request({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json() as T;
}

interface Ingested {
  chunks: number;
  polls: number;
  /** Statements of the load request, and from the process request to the end (polls included). */
  loadStatements: number;
  processStatements: number;
}

/** Loads and processes document `n`, polling every 10 ms as the bench does. */
async function ingest(p: TestPlatform, words: string[], n: number): Promise<Ingested> {
  const atLoad = statements;
  const doc = await ok<{ id: string }>(p, 'POST', '/api/documents/load', {
    source: 'text',
    content: corpusDocument(words, n, DOC_CHARS),
    title: `Bench document ${n}`,
    topic: TOPIC,
  });
  const atProcess = statements;
  await ok(p, 'POST', `/api/documents/${doc.id}/process`, {
    chunkSize: CHUNK_SIZE,
    chunkOverlap: CHUNK_OVERLAP,
    embeddingModel: 'builtin/hashed-ngrams',
  });
  for (let polls = 1; ; polls++) {
    const view = await ok<{ status: string; processing: boolean; chunkCount: number; error: string | null }>(
      p,
      'GET',
      `/api/documents/${doc.id}?fields=status,processing,chunkCount,error`,
    );
    if (!view.processing && view.status === 'indexed')
      return {
        chunks: view.chunkCount,
        polls,
        loadStatements: atProcess - atLoad,
        processStatements: statements - atProcess,
      };
    if (view.status === 'failed') throw new Error(`document ${doc.id} failed: ${view.error}`);
    await sleep(10);
  }
}

async function main(): Promise<void> {
  const dialect = process.env.EVAL_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
  const words = vocabulary();
  const p = await createTestPlatform({ dialect });
  try {
    const startLoad = load();
    let next = 0;
    let chunks = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < DOCUMENTS) {
          const done = await ingest(p, words, next++);
          chunks += done.chunks;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // One document alone: what its processing costs in statements, its polls' own taken out (a poll
    // is measured alone first).
    const id = (await ok<{ data: Array<{ documentId: string }> }>(p, 'GET', '/api/documents?limit=1')).data[0]
      ?.documentId;
    const atPoll = statements;
    await ok(p, 'GET', `/api/documents/${id}?fields=status,processing,chunkCount,error`);
    const perPoll = statements - atPoll;
    const alone = await ingest(p, words, DOCUMENTS);
    console.log(
      `ingest (${dialect}): ${DOCUMENTS} documents, ${chunks} chunks in ${seconds.toFixed(1)} s = ` +
        `${(chunks / seconds).toFixed(0)} chunks/s (${IN_FLIGHT} in flight); one document alone ` +
        `(${alone.chunks} chunks): load ${alone.loadStatements} statements, processing ` +
        `${alone.processStatements - alone.polls * perPoll} (${alone.polls} polls of ${perPoll} left out); ` +
        `load average ${startLoad} → ${load()}`,
    );
  } finally {
    await p.close();
  }
}

await main();
