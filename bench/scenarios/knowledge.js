/**
 * Issue 13: the knowledge base at size. Its own platform child (SQLite, fresh data directory) ingests
 * synthetic English-like documents (bench/knowledge-corpus.js) through the public API — load, process,
 * poll until indexed — to 10,000 chunks, then measures keyword, vector and hybrid query latency (client
 * side and the server's own `tookMs`), then grows the topic to BENCH_KB_CHUNKS (default 100,000) and
 * measures again; then restarts the child on the same data and times the first (cold) query. BENCH_KB_CPU_PROF=<dir> makes the child write a CPU profile there;
 * BENCH_KB_DATABASE_URL a PostgreSQL database to run on instead of SQLite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, rssMb, start, stop, waitHealthy } from '../children.js';
import { client, fmt, ingestCorpus, percentile } from '../kit.js';
import { queryMaker, vocabulary } from '../knowledge-corpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const FIRST_STOP = 10_000;
const TOP_CHUNKS = Number(process.env.BENCH_KB_CHUNKS ?? 100_000);
const CHUNK_SIZE = 500;
const CHUNK_OVERLAP = 50;
const MODEL = 'builtin/hashed-ngrams';
/** Characters per document: ~100 chunks of ≤ 500 characters with this corpus (paragraph-aligned cuts). */
const DOC_CHARS = 33_000;
/** Documents loaded and processed at once (the server runs DOCUMENT_CONCURRENCY jobs of them). */
const IN_FLIGHT = 4;
const QUERIES = 200;
const WARMUP = 20;
const TOPIC = 'bench-kb';
const MODES = ['keyword', 'vector', 'hybrid'];
const CPU_PROF_DIR = process.env.BENCH_KB_CPU_PROF ?? '';

// No scenario in the shared table (run.js reads `default` as a list of them): only the report below.
export default [];

const ingest = (call, words, state, target) =>
  ingestCorpus(call, words, state, target, {
    topic: TOPIC,
    docChars: DOC_CHARS,
    chunkSize: CHUNK_SIZE,
    chunkOverlap: CHUNK_OVERLAP,
    model: MODEL,
    inFlight: IN_FLIGHT,
  });

/** WARMUP then QUERIES sequential queries per mode: client and server (`tookMs`) p50/p99 in ms. */
async function measure(call, words, seed) {
  const out = {};
  for (const mode of MODES) {
    const next = queryMaker(words, seed);
    const client = [];
    const server = [];
    let hits = 0;
    for (let i = 0; i < WARMUP + QUERIES; i++) {
      const body = { query: next(), topK: 5, topics: [TOPIC], mode };
      const t0 = performance.now();
      const answer = await call('POST', '/api/knowledge/query', body, [200]);
      const ms = performance.now() - t0;
      if (i < WARMUP) continue;
      client.push(ms);
      server.push(answer.tookMs);
      if (answer.results.length > 0) hits++;
    }
    // A query of vocabulary words that finds nothing means the index is not what we think we measure.
    if (hits < QUERIES * 0.9) throw new Error(`${mode}: only ${hits} of ${QUERIES} queries found anything`);
    client.sort((a, b) => a - b);
    server.sort((a, b) => a - b);
    out[mode] = {
      client: [percentile(client, 0.5), percentile(client, 0.99)],
      server: [percentile(server, 0.5), percentile(server, 0.99)],
    };
  }
  return out;
}

/** One hybrid query's client-side time in ms (the first after an ingest or a start: the cold path). */
async function firstQuery(call, words, seed) {
  const body = { query: queryMaker(words, seed)(), topK: 5, topics: [TOPIC], mode: 'hybrid' };
  const t0 = performance.now();
  await call('POST', '/api/knowledge/query', body, [200]);
  return performance.now() - t0;
}

function queryLines(chunks, result, goal) {
  const part = (side) =>
    MODES.map((m) => `${m} ${fmt(result[m][side][0], 1)}/${fmt(result[m][side][1], 1)}`).join(', ');
  const at = `knowledge query at ${fmt(chunks)} chunks (p50/p99 ms`;
  return [`${at}, client): ${part('client')}${goal}`, `${at}, server tookMs): ${part('server')}`];
}

/** Starts a platform child, ingests and queries at 10k and the top size, and stops it whatever happens. */
export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-kb-'));
  let platform;
  try {
    const key = generateKey('production');
    // BENCH_KB_DATABASE_URL=postgres://… measures on PostgreSQL (an empty database) instead of SQLite.
    const database = process.env.BENCH_KB_DATABASE_URL
      ? { DATABASE_URL: process.env.BENCH_KB_DATABASE_URL }
      : {};
    platform = await start(path.join(bench, 'platform-server.js'), platformEnv(dataDir, key, database), [
      ...PLATFORM_NODE_FLAGS,
      ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []),
    ]);
    const baseUrl = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(baseUrl);
    const call = client(baseUrl, key);
    const words = vocabulary();
    const state = { next: 0, chunks: 0, base: 0 };
    const lines = [];

    const first = await ingest(call, words, state, Math.min(FIRST_STOP, TOP_CHUNKS));
    const firstChunks = state.chunks;
    const firstDocs = state.next;
    const small = await measure(call, words, 101);
    lines.push(...queryLines(firstChunks, small, ''));

    let second;
    let big;
    if (TOP_CHUNKS > firstChunks) {
      state.base = state.chunks;
      second = await ingest(call, words, state, TOP_CHUNKS);
      // The first query after the ingest: the topic grew ninefold since it was last loaded.
      const grown = await firstQuery(call, words, 303);
      big = await measure(call, words, 202);
      lines.push(...queryLines(state.chunks, big, ' (goal: hybrid p99 ≤ 50 ms)'));
      lines.push(
        `knowledge first hybrid query after the ingest to ${fmt(state.chunks)} chunks: ${fmt(grown, 1)} ms`,
      );
    }
    const rss = rssMb(platform.child.pid);
    // A restart on the same data: the first (cold) query, at once and once the boot's warming is done.
    await stop(platform.child);
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key, database),
      PLATFORM_NODE_FLAGS,
    );
    const restartedUrl = `http://127.0.0.1:${platform.port}`;
    const bootStarted = performance.now();
    await waitHealthy(restartedUrl);
    const healthyMs = performance.now() - bootStarted;
    const restarted = client(restartedUrl, key);
    const cold = await firstQuery(restarted, words, 404);
    const again = await firstQuery(restarted, words, 405);
    lines.push(
      `knowledge after a restart at ${fmt(state.chunks)} chunks: first hybrid query ${fmt(cold, 1)} ms ` +
        `(sent ${fmt(healthyMs, 0)} ms after the start, when /health answered), the next ${fmt(again, 1)} ms`,
    );
    const ingestLine =
      `knowledge ingest (${MODEL}, chunkSize ${CHUNK_SIZE}, overlap ${CHUNK_OVERLAP}, ${database.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, ${IN_FLIGHT} documents in flight): ` +
      `${fmt(first.rate)} chunks/s to ${fmt(firstChunks)} (${firstDocs} documents, ${fmt(first.seconds, 1)} s)` +
      (second
        ? `; ${fmt(second.rate)} chunks/s from there to ${fmt(state.chunks)} (${state.next} documents, ${fmt(second.seconds, 1)} s)`
        : '');
    return [
      ingestLine,
      ...lines,
      `knowledge platform child RSS after ${fmt(state.chunks)} chunks and the queries: ${fmt(rss, 0)} MB ` +
        `(${QUERIES} sequential queries per mode after ${WARMUP} warm-up, 3–6 words each, topK 5, one topic)`,
    ];
  } finally {
    await stop(platform?.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
