/**
 * Issue 27, item 2: `/health` p99 on an idle platform, then while the largest allowed document (20 MB of
 * text, DOCUMENT_MAX_BYTES) is loaded, chunked, embedded and indexed on SQLite, while the first knowledge
 * search over it loads its vectors, and while the largest allowed chat (a 20 MB body, LLM_BODY_LIMIT_BYTES)
 * goes to builtin/extractive. `/health` is asked one request after the other (10 ms apart) throughout;
 * the goal is p99 ≤ 200 ms under each load. Its own platform child (SQLite, fresh data directory).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, start, stop, waitHealthy } from '../children.js';
import { fmt, percentile, sleep } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const MAX_BYTES = 20 * 1024 * 1024;
const IDLE_MS = 3_000;

// No scenario in the shared table: only the report below.
export default [];

const WORDS =
  'tower bridge river castle lantern harbour meadow orchard granite copper willow falcon ember quarry ' +
  'signal ledger canyon thistle beacon glacier';

function prose(bytes) {
  const words = WORDS.split(' ');
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const sentence = `${Array.from({ length: 14 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(' ')} w${i}.`;
    const piece = i % 8 === 7 ? `${sentence}\n\n` : `${sentence} `;
    parts.push(piece);
    size += piece.length;
  }
  return parts.join('').slice(0, bytes);
}

/** Asks /health back to back until `stop()`; returns the latencies' p50, p99 and max. */
function probe(baseUrl) {
  let running = true;
  const samples = [];
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await (await fetch(`${baseUrl}/health`)).arrayBuffer();
      samples.push(performance.now() - t0);
      await sleep(10);
    }
  })();
  return async () => {
    running = false;
    await loop;
    samples.sort((a, b) => a - b);
    return {
      n: samples.length,
      p50: percentile(samples, 0.5),
      p99: percentile(samples, 0.99),
      max: samples.at(-1),
    };
  };
}

async function during(baseUrl, work) {
  const done = probe(baseUrl);
  await sleep(100);
  const t0 = performance.now();
  try {
    await work();
  } catch (error) {
    await done();
    throw error;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { ...(await done()), seconds };
}

const line = (what, r) =>
  `/health ${what}: p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, max ${fmt(r.max, 0)} ms ` +
  `(${r.n} probes${r.seconds ? `, work ${fmt(r.seconds, 1)} s` : ''})`;

export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-loop-'));
  let platform;
  try {
    const key = generateKey('production');
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key),
      PLATFORM_NODE_FLAGS,
    );
    const baseUrl = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(baseUrl);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = async (url, body) => {
      const res = await fetch(`${baseUrl}${url}`, { method: 'POST', headers, body });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
      return json;
    };
    const text = prose(MAX_BYTES - 4096);
    const docBody = Buffer.from(JSON.stringify({ source: 'text', content: text, topic: 'loop' }));
    const chatBody = Buffer.from(
      JSON.stringify({
        model: 'builtin/extractive',
        stream: false,
        // Line breaks grow as JSON escapes: room for them under the body limit.
        messages: [
          { role: 'user', content: `${text.slice(0, MAX_BYTES - 128 * 1024)}\nWhich granite tower?` },
        ],
      }),
    );

    const idle = await during(baseUrl, () => sleep(IDLE_MS));
    const documentRun = await during(baseUrl, async () => {
      const doc = await post('/api/documents/load', docBody);
      await post(`/api/documents/${doc.documentId}/process`, '{}');
      for (;;) {
        const res = await fetch(`${baseUrl}/api/documents/${doc.documentId}?fields=status,processing`, {
          headers,
        });
        const row = await res.json();
        if (!row.processing && (row.status === 'indexed' || row.status === 'failed')) {
          if (row.status === 'failed') throw new Error('the bench document failed to process');
          return;
        }
        await sleep(200);
      }
    });
    const search = await during(baseUrl, () =>
      post('/api/knowledge/query', JSON.stringify({ query: 'granite lantern', topK: 5 })),
    );
    const chat = await during(baseUrl, () => post('/api/chat', chatBody));
    return [
      line('idle', idle),
      line(
        `while a ${fmt(MAX_BYTES / 1048576)} MB text document is loaded and processed (SQLite)`,
        documentRun,
      ),
      line('while the first knowledge search over it loads its vectors', search),
      line(`while builtin/extractive answers a ${fmt(chatBody.length / 1048576, 1)} MB /api/chat`, chat),
    ];
  } finally {
    await stop(platform?.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
