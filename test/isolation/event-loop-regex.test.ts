import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import {
  type Api,
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  type PlatformProcess,
  startServer,
  tempDir,
} from '../workflows/process/processes.js';
import { flow, n8nNode } from '../workflows/support.js';

/**
 * Issue 27, item 2: nothing a caller controls holds the event loop. The platform runs as its own
 * process (as users start it) and this test, in another, polls `GET /health` over HTTP while
 *
 * - a workflow tests a catastrophic-backtracking pattern (a new one per item, from an expression, with
 *   "continue on fail") over many items: before, each test ran on the server's thread under a 100 ms
 *   `vm` timeout, so every item stalled every request;
 * - a webhook receives the largest JSON body it may accept: before, one JSON.parse plus a guard that
 *   built a path string per value held the loop for seconds.
 *
 * The goal is `/health` within 200 ms. On a loaded 2-core CI machine one probe can be late for reasons
 * of its own (GC, another process), so the assertion is on the 95th percentile (< 200 ms) and the worst
 * probe (< 1 s); the blocking code fails both by far. `npm run bench` measures it precisely.
 */

const ITEMS = 300;
/** The platform webhook node's largest `bodyLimitBytes` (for bytes kept whole). */
const LARGEST_WEBHOOK_BODY = 104_857_600;
/** The largest JSON body a webhook parses (WEBHOOK_JSON_LIMIT_BYTES' default), whatever the node allows. */
const LARGEST_JSON_BODY = 1_048_576;
/** The largest body of the API routes (BODY_LIMIT_BYTES' default). */
const LARGEST_API_BODY = 1_048_576;

interface Probes {
  latencies: number[];
  p95: number;
  max: number;
}

/** `/health` again and again until `work` settles; each probe's latency from when it was sent. */
async function probeWhile<T>(base: string, work: Promise<T>): Promise<{ result: T; probes: Probes }> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  const latencies: number[] = [];
  while (!done) {
    const sent = performance.now();
    const res = await fetch(`${base}/health`);
    await res.arrayBuffer();
    latencies.push(performance.now() - sent);
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 10));
  }
  const result = await settled;
  const sorted = [...latencies].sort((a, b) => a - b);
  const p95 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0;
  return { result, probes: { latencies, p95, max: sorted.at(-1) ?? 0 } };
}

const summary = (p: Probes) =>
  `${p.latencies.length} probes, p95 ${p.p95.toFixed(0)} ms, max ${p.max.toFixed(0)} ms`;

describe('the event loop stays free while user-driven CPU work runs (SQLite, own process)', () => {
  let server: PlatformProcess & { url: string };
  let api: Api;
  let key: string;

  beforeAll(async () => {
    key = generateKey('production');
    server = await startServer(['serve'], {
      ...baseEnv(tempDir()),
      PLATFORM_BOOTSTRAP_KEY: key,
      WEBHOOK_RESPONSE_TIMEOUT_MS: '120000',
    });
    api = apiClient(server.url, key);
  }, 60_000);
  afterAll(cleanup);

  it('a catastrophic regex over many items, one new pattern per item', async () => {
    await createAndActivate(api, {
      name: 'catastrophic regex',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, { httpMethod: 'POST', path: 'regex', responseMode: 'lastNode' }),
        n8nNode('Items', 'code', 2, {
          jsCode: `return Array.from({ length: ${ITEMS} }, (_, n) => ({ json: { text: 'a'.repeat(28) + (n % 2 ? '!' : ''), n } }));`,
        }),
        n8nNode(
          'Filter',
          'filter',
          2.2,
          {
            conditions: {
              options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
              conditions: [
                {
                  id: 'c0',
                  leftValue: '={{ $json.text }}',
                  // Exponential for a backtracking engine; a different pattern on every item.
                  rightValue: '={{ "^(a+)+(?:x" + $json.n + ")?$" }}',
                  operator: { type: 'string', operation: 'regex' },
                },
              ],
              combinator: 'and',
            },
            options: {},
          },
          { continueOnFail: true },
        ),
        n8nNode('Count', 'code', 2, { jsCode: 'return [{ json: { kept: $input.all().length } }];' }),
      ],
      connections: {
        Webhook: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
        Items: { main: [[{ node: 'Filter', type: 'main', index: 0 }]] },
        Filter: { main: [[{ node: 'Count', type: 'main', index: 0 }]] },
      },
    });
    // A few runs at once, as a loop of calls would start them.
    const call = () =>
      fetch(`${server.url}/webhook/regex`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const { result: results, probes } = await probeWhile(server.url, Promise.all([call(), call(), call()]));
    expect(probes.latencies.length, summary(probes)).toBeGreaterThan(3);
    expect(probes.p95, summary(probes)).toBeLessThan(200);
    expect(probes.max, summary(probes)).toBeLessThan(1_000);
    for (const result of results) {
      // The linear engine answers the pattern: the even items match, the odd ones (ending in "!") do not.
      expect(result, JSON.stringify(result.body)).toMatchObject({ status: 200, body: { kept: ITEMS / 2 } });
    }
  }, 120_000);

  it('the largest JSON body a webhook or an API route parses', async () => {
    await createAndActivate(
      api,
      flow('large json', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: {
            path: 'large-json',
            responseMode: 'lastNode',
            options: { bodyLimitBytes: LARGEST_WEBHOOK_BODY },
          },
        },
        { name: 'Done', type: 'noOp' },
      ]),
    );
    const post = (url: string, body: Buffer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      }).then(async (res) => ({ status: res.status, text: await res.text() }));

    // The costliest shape per byte for a parser, ~3 bytes a value, at the API's largest body: parsed
    // in slices, then refused by the route's schema (it wants an object). Before, one JSON.parse and a
    // guard building a path per value held the loop for over a second. What remains is one garbage
    // collection of 350,000 objects (~0.1–0.3 s here), which no slicing removes.
    const empties = (bytes: number) => Buffer.from(`[${'{},'.repeat(Math.floor((bytes - 1) / 3) - 1)}{}]`);
    const costly = await probeWhile(
      server.url,
      post('/api/v1/workflows', empties(LARGEST_API_BODY), { authorization: `Bearer ${key}` }),
    );
    // Generous for a loaded machine (measured: 0.17 s now, 0.9–1.5 s before).
    expect(costly.probes.max, summary(costly.probes)).toBeLessThan(600);
    expect(costly.result.status, costly.result.text.slice(0, 300)).toBe(400);

    // A webhook's largest JSON, records as a shop would send them, through a whole run (the run's
    // data is stored on SQLite, on the server's thread: that store's cost, not the parser's).
    const records: string[] = [];
    let size = 2;
    for (let i = 0; ; i++) {
      const record = JSON.stringify({
        id: i,
        name: `customer ${i}`,
        email: `c${i}@example.com`,
        total: i * 1.5,
      });
      if (size + record.length + 1 > LARGEST_JSON_BODY) break;
      records.push(record);
      size += record.length + 1;
    }
    expect((await post('/webhook/large-json', Buffer.from('[{"id":1}]'))).status).toBe(200);
    const webhook = await probeWhile(
      server.url,
      post('/webhook/large-json', Buffer.from(`[${records.join(',')}]`)),
    );
    expect(webhook.probes.max, summary(webhook.probes)).toBeLessThan(1_000);
    expect(webhook.result.status, webhook.result.text.slice(0, 300)).toBe(200);
    expect((JSON.parse(webhook.result.text) as { body: unknown[] }).body).toHaveLength(records.length);

    // A webhook refuses larger JSON before parsing it, naming the limit; the same bytes as binary pass.
    const over = await post('/webhook/large-json', empties(LARGEST_JSON_BODY + 4));
    expect(over.status).toBe(413);
    expect(JSON.parse(over.text)).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringMatching(/larger than webhooks parse \(1048576 bytes\).*binary/),
      details: { limit: LARGEST_JSON_BODY, webhookLimit: LARGEST_WEBHOOK_BODY },
    });
    const bytes = await post('/webhook/large-json', empties(4 * LARGEST_JSON_BODY), {
      'content-type': 'application/octet-stream',
    });
    expect(bytes.status).toBe(200);
  }, 180_000);
});
