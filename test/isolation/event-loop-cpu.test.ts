import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/listening.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';

/**
 * Issue 27, item 2: CPU work whose size a caller controls never holds the event loop. A real platform
 * listens on loopback; while it works on the largest input its settings allow, `/health` is asked
 * again and again over HTTP, and its slowest answer must stay far below what the work takes.
 *
 * The goal is 200 ms (measured in `npm run bench`); the bound here is generous for a loaded 2-core CI
 * machine. Before the fix, on SQLite a document of this size held every request for seconds, and the
 * extractive model on a maximal chat body for over a second.
 */
const HEALTH_BOUND_MS = 1_000;
/**
 * The largest document these platforms accept (the default is 20 MB; the bench runs that one). 4 MB
 * makes ~22,000 chunks: each step below runs for seconds, far past the bound, and the file stays
 * within CI's time (8 MB took 76 s on SQLite and 54 s on PostgreSQL for the same finding).
 */
const DOCUMENT_MAX_BYTES = 4 * 1024 * 1024;
/** The chat body limit: the shipped default, 20 MB. */
const LLM_BODY_LIMIT_BYTES = 20 * 1024 * 1024;

const WORDS =
  'tower bridge river castle lantern harbour meadow orchard granite copper willow falcon ember quarry ' +
  'signal ledger canyon thistle beacon glacier';

/** Prose of about `bytes` bytes: sentences, paragraphs, many distinct words. */
function prose(bytes: number): string {
  const words = WORDS.split(' ');
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const sentence = `${Array.from({ length: 14 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(' ')} w${i}.`;
    const piece = i % 8 === 7 ? `${sentence}\n\n` : `${sentence} `;
    parts.push(piece);
    size += piece.length;
  }
  return parts.join('').slice(0, bytes);
}

interface Probe {
  /** How many answers came so far. */
  answered(): number;
  stop(): Promise<{ count: number; maxMs: number }>;
}

/**
 * Asks /health over HTTP, one request after the other (10 ms apart), until stopped; records the slowest
 * answer. The platform runs in this process, so a stall can also fall between two probes: each answer
 * is timed from when its probe was due, so a timer that fired late counts as the wait it was.
 */
function probeHealth(base: string): Probe {
  let running = true;
  let maxMs = 0;
  let count = 0;
  const loop = (async () => {
    let due = performance.now();
    while (running) {
      const res = await fetch(`${base}/health`);
      await res.arrayBuffer();
      maxMs = Math.max(maxMs, performance.now() - due);
      count++;
      // A macrotask between probes, so the probe never starves the work it watches.
      due = performance.now() + 10;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    answered: () => count,
    async stop() {
      running = false;
      await loop;
      return { count, maxMs };
    },
  };
}

/** Runs `work` while probing /health; returns the work's result and the probe's figures. */
async function whileProbing<T>(base: string, work: () => Promise<T>) {
  const probe = probeHealth(base);
  // The first answer proves the probe runs before the work starts.
  await until(() => probe.answered() > 0, 'a first /health answer', 20_000);
  try {
    const result = await work();
    const health = await probe.stop();
    console.info(`/health while working: ${health.count} answers, slowest ${Math.round(health.maxMs)} ms`);
    return { result, health };
  } catch (error) {
    await probe.stop();
    throw error;
  }
}

async function listening(dialect: 'sqlite' | 'postgres'): Promise<{ p: TestPlatform; base: string }> {
  const port = await freePort();
  const p = await createTestPlatform({
    dialect,
    env: {
      DOCUMENT_MAX_BYTES: String(DOCUMENT_MAX_BYTES),
      LLM_BODY_LIMIT_BYTES: String(LLM_BODY_LIMIT_BYTES),
      CPU_WORKERS: '1',
    },
  });
  await p.app.listen({ port, host: '127.0.0.1' });
  return { p, base: `http://127.0.0.1:${port}` };
}

async function post(base: string, key: string, url: string, body: Buffer | string) {
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function get(base: string, key: string, url: string) {
  const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as Record<string, unknown>;
}

/** Processes the document and waits until it is indexed (or failed), polling like a client would. */
async function processToIndexed(base: string, key: string, id: string) {
  // Small chunks: a large store (~22,000 chunks) for the search that follows.
  const started = await post(
    base,
    key,
    `/api/documents/${id}/process`,
    JSON.stringify({ chunkSize: 200, chunkOverlap: 0 }),
  );
  expect(started.status, JSON.stringify(started.json)).toBe(202);
  for (;;) {
    const doc = await get(base, key, `/api/documents/${id}?fields=status,processing,error,chunkCount`);
    if (doc.processing === false && (doc.status === 'indexed' || doc.status === 'failed')) return doc;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(await testDialects())(
  'the event loop stays free while large inputs are worked on (%s)',
  (dialect) => {
    let p: TestPlatform;
    let base: string;
    const text = prose(DOCUMENT_MAX_BYTES - 1024);

    beforeAll(async () => {
      ({ p, base } = await listening(dialect));
    });
    afterAll(async () => {
      p.app.server.closeAllConnections();
      await p.close();
    });

    it('a largest-allowed document: upload, chunking, embedding and indexing', async () => {
      const body = Buffer.from(JSON.stringify({ source: 'text', content: text, topic: 'big' }));
      const { result: doc, health } = await whileProbing(base, async () => {
        const loaded = await post(base, p.adminKey, '/api/documents/load', body);
        expect(loaded.status, JSON.stringify(loaded.json).slice(0, 500)).toBe(201);
        return processToIndexed(base, p.adminKey, loaded.json.documentId as string);
      });
      expect(doc).toMatchObject({ status: 'indexed', error: null });
      expect(doc.chunkCount).toBeGreaterThan(17_000);
      expect(health.count).toBeGreaterThan(5);
      expect(health.maxMs).toBeLessThan(HEALTH_BOUND_MS);
    }, 300_000);

    it('a knowledge search over that store (its vectors loaded cold)', async () => {
      const { result, health } = await whileProbing(base, () =>
        post(
          base,
          p.adminKey,
          '/api/knowledge/query',
          JSON.stringify({ query: 'granite lantern w4242', topK: 5 }),
        ),
      );
      expect(result.status).toBe(200);
      expect((result.json.results as unknown[]).length).toBe(5);
      expect(health.maxMs).toBeLessThan(HEALTH_BOUND_MS);
    }, 120_000);

    it('deleting that document', async () => {
      const list = await get(base, p.adminKey, '/api/documents?topic=big');
      const id = (list.data as Array<{ id: string }>)[0]!.id;
      const { result, health } = await whileProbing(base, () =>
        fetch(`${base}/api/documents/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${p.adminKey}` },
        }).then((res) => res.status),
      );
      expect(result).toBe(204);
      expect(health.maxMs).toBeLessThan(HEALTH_BOUND_MS);
    }, 120_000);
  },
);

describe('the event loop stays free while the built-in models answer a largest-allowed chat', () => {
  let p: TestPlatform;
  let base: string;
  // One user message filling the body: the lone-message path reads its own context. The prose is cut
  // mid-sentence, so a paragraph break sets the question apart (one line break would continue the cut
  // sentence, as a soft-wrapped paragraph does). Line breaks grow as JSON escapes: leave room for them.
  const content = `${prose(LLM_BODY_LIMIT_BYTES - 128 * 1024)}\n\nWhich granite tower?`;

  beforeAll(async () => {
    ({ p, base } = await listening('sqlite'));
  });
  afterAll(async () => {
    p.app.server.closeAllConnections();
    await p.close();
  });

  it('/api/chat to builtin/extractive', async () => {
    const body = Buffer.from(
      JSON.stringify({ model: 'builtin/extractive', stream: false, messages: [{ role: 'user', content }] }),
    );
    expect(body.length).toBeLessThanOrEqual(LLM_BODY_LIMIT_BYTES);
    const { result, health } = await whileProbing(base, () => post(base, p.adminKey, '/api/chat', body));
    expect(result.status, JSON.stringify(result.json).slice(0, 500)).toBe(200);
    expect((result.json.message as { content: string }).content).toContain('granite');
    expect(health.maxMs).toBeLessThan(HEALTH_BOUND_MS);
  }, 120_000);

  it('/v1/chat/completions to builtin/extractive', async () => {
    const body = Buffer.from(
      JSON.stringify({ model: 'builtin/extractive', messages: [{ role: 'user', content }] }),
    );
    const { result, health } = await whileProbing(base, () =>
      post(base, p.adminKey, '/v1/chat/completions', body),
    );
    expect(result.status, JSON.stringify(result.json).slice(0, 500)).toBe(200);
    expect(health.maxMs).toBeLessThan(HEALTH_BOUND_MS);
  }, 120_000);
});
