import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextUtcMidnight } from '../../src/core/clock.js';
import type { Dialect } from '../../src/core/db/types.js';
import { deleteRedisPrefixes, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable, testDialects } from '../helpers/services.js';
import { createWorkflow, n8nNode, otherAccountKey, workflowPlatform } from '../workflows/support.js';

/**
 * Fair sharing of execution capacity (issue 27, item 3): one account's runaway executions take at
 * most WORKFLOW_ACCOUNT_CONCURRENCY slots, waiting executions are served round-robin by account, and
 * every execution counts against the account's daily execution quota. On SQLite with the in-process
 * queue, and on PostgreSQL with the shared Redis queue.
 */

interface Variant {
  label: string;
  dialect: Dialect;
  redis: boolean;
}
const dialects = await testDialects();
const variants: Variant[] = [{ label: 'SQLite + in-process queue', dialect: 'sqlite', redis: false }];
if (dialects.includes('postgres') && (await redisAvailable()))
  variants.push({ label: 'PostgreSQL + Redis queue', dialect: 'postgres', redis: true });

const prefixes: string[] = [];
afterAll(async () => {
  await deleteRedisPrefixes(prefixes);
});

/** Records who called, in arrival order (the order executions reached their HTTP Request node). */
let recorder: Server;
let recorderUrl = '';
const hits: string[] = [];
beforeAll(async () => {
  recorder = createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://x').searchParams.get('who') ?? '?');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
  recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/hit`;
});
afterAll(() => new Promise<void>((r) => recorder.close(() => r())));

const edge = (to: string) => ({ main: [[{ node: to, type: 'main', index: 0 }]] });
const hook = (path: string, responseMode: 'onReceived' | 'lastNode') =>
  n8nNode('Webhook', 'webhook', 2, { httpMethod: 'POST', path, responseMode, options: {} });

/** Webhook (answers at once) → Code that never ends (stopped by CODE_NODE_TIMEOUT_MS). */
const runaway = (path: string) => ({
  name: `runaway ${path}`,
  nodes: [hook(path, 'onReceived'), n8nNode('Spin', 'code', 2, { jsCode: 'while (true) {}' })],
  connections: { Webhook: edge('Spin') },
});
/** Webhook → NoOp, answered with the last node's output. */
const plain = (path: string) => ({
  name: `plain ${path}`,
  nodes: [hook(path, 'lastNode'), n8nNode('Nothing', 'noOp', 1, {})],
  connections: { Webhook: edge('Nothing') },
});
/** Webhook (answers at once) → HTTP Request telling the recorder `body.who`. */
const recorded = (path: string) => ({
  name: `recorded ${path}`,
  nodes: [
    hook(path, 'onReceived'),
    n8nNode('Tell', 'httpRequest', 4.2, {
      url: `={{ "${recorderUrl}?who=" + $json.body.who }}`,
      options: {},
    }),
  ],
  connections: { Webhook: edge('Tell') },
});

describe.each(variants)('fair sharing of execution capacity on $label', ({ dialect, redis }) => {
  const platforms: TestPlatform[] = [];
  afterAll(async () => {
    for (const p of platforms) await p.close();
  });

  async function platform(env: Record<string, string>): Promise<TestPlatform> {
    const p = await workflowPlatform(dialect, env, { redis });
    platforms.push(p);
    const prefix = p.ctx.config.QUEUE_PREFIX;
    if (redis) prefixes.push(prefix);
    return p;
  }
  async function deploy(p: TestPlatform, key: string, body: unknown): Promise<string> {
    const id = await createWorkflow(p, body, key);
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, key });
    if (res.statusCode !== 200) throw new Error(`activate: ${res.statusCode} ${res.body}`);
    return id;
  }
  const call = (p: TestPlatform, path: string, payload: Record<string, unknown> = {}) =>
    p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload });
  const executions = async (p: TestPlatform, key: string, query = '') =>
    (
      (await p.request({ method: 'GET', url: `/api/v1/executions?limit=250${query}`, key })).json() as {
        data: Array<{ id: string; mode: string; status: string; workflowId: string }>;
      }
    ).data;
  async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it("A's runaway executions take at most their share: B's webhook → NoOp answers at once", async () => {
    const p = await platform({
      WORKFLOW_CONCURRENCY: '4',
      WORKFLOW_ACCOUNT_CONCURRENCY: '2',
      CODE_NODE_TIMEOUT_MS: '2000',
      // Today B waited behind every queued runaway and got this 504.
      WEBHOOK_RESPONSE_TIMEOUT_MS: '8000',
    });
    const a = await otherAccountKey(p);
    const b = await otherAccountKey(p);
    await deploy(p, a, runaway('a-spin'));
    await deploy(p, b, plain('b-plain'));
    for (let i = 0; i < 16; i++) expect((await call(p, 'a-spin')).statusCode).toBe(200);
    // A saturates: its cap of running executions is reached, the rest wait.
    await until('A running', async () =>
      (await executions(p, a, '&status=running')).length >= 2 ? true : undefined,
    );
    const started = performance.now();
    const answer = await call(p, 'b-plain', { hello: 'b' });
    const tookMs = performance.now() - started;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ body: { hello: 'b' } });
    // Idle it is a few ms; generous for a loaded 2-core machine with two sandbox threads spinning.
    expect(tookMs).toBeLessThan(3_000);
    // A never ran more than its cap, however many it queued.
    expect((await executions(p, a, '&status=running')).length).toBeLessThanOrEqual(2);
    expect((await executions(p, a, '&status=new')).length).toBeGreaterThan(0);
    // A's backlog goes now: the sandbox threads are the process's, and the next test's too.
    platforms.splice(platforms.indexOf(p), 1);
    await p.close();
  });

  it('waiting executions are served round-robin by account, not first come first served', async () => {
    hits.length = 0;
    const p = await platform({
      WORKFLOW_CONCURRENCY: '1',
      WORKFLOW_ACCOUNT_CONCURRENCY: '1',
      CODE_NODE_TIMEOUT_MS: '2500',
    });
    const a = await otherAccountKey(p);
    const b = await otherAccountKey(p);
    const c = await otherAccountKey(p);
    await deploy(p, a, recorded('a-rec'));
    await deploy(p, b, recorded('b-rec'));
    await deploy(p, c, runaway('c-block'));
    // C's runaway holds the only slot while A then B queue three each.
    expect((await call(p, 'c-block')).statusCode).toBe(200);
    await until('C running', async () =>
      (await executions(p, c, '&status=running')).length === 1 ? true : undefined,
    );
    for (const who of ['A1', 'A2', 'A3']) expect((await call(p, 'a-rec', { who })).statusCode).toBe(200);
    for (const who of ['B1', 'B2', 'B3']) expect((await call(p, 'b-rec', { who })).statusCode).toBe(200);
    await until('six recorded runs', async () => (hits.length >= 6 ? true : undefined));
    expect(hits).toEqual(['A1', 'B1', 'A2', 'B2', 'A3', 'B3']);
  });

  it('the daily execution quota counts schedules, sub-workflows, error workflows and webhooks, then refuses with 429', async () => {
    const p = await platform({ WORKFLOW_DAILY_EXECUTIONS: '6' });
    p.clock.set('2026-03-10T18:00:30Z');
    const a = await otherAccountKey(p);
    const b = await otherAccountKey(p);
    // 1 schedule fire.
    const scheduled = await deploy(p, a, {
      name: 'every minute',
      nodes: [
        n8nNode('Tick', 'scheduleTrigger', 1.2, {
          rule: { interval: [{ field: 'minutes', minutesInterval: 1 }] },
        }),
        n8nNode('Nothing', 'noOp', 1, {}),
      ],
      connections: { Tick: edge('Nothing') },
    });
    const scheduler = p.ctx.apis.workflows?.scheduler;
    if (!scheduler) throw new Error('workflows module missing');
    p.clock.set('2026-03-10T18:01:00Z');
    await scheduler.tick();
    await until('the scheduled run', async () =>
      (await executions(p, a, `&workflowId=${scheduled}`)).length === 1 ? true : undefined,
    );
    // 2 and 3: a webhook whose Execute Workflow waits for a sub-workflow; 4: a queued sub-workflow.
    const callee = await createWorkflow(
      p,
      {
        name: 'callee',
        nodes: [n8nNode('Called', 'executeWorkflowTrigger', 1.1, { inputSource: 'passthrough' })],
        connections: {},
      },
      a,
    );
    const ref = { __rl: true, value: callee, mode: 'id' };
    await deploy(p, a, {
      name: 'caller',
      nodes: [
        hook('a-caller', 'lastNode'),
        n8nNode('Waited', 'executeWorkflow', 1.2, { workflowId: ref, options: {} }),
        n8nNode('Queued', 'executeWorkflow', 1.2, {
          workflowId: ref,
          options: { waitForSubWorkflow: false },
        }),
      ],
      connections: { Webhook: edge('Waited'), Waited: edge('Queued') },
    });
    expect((await call(p, 'a-caller')).statusCode).toBe(200);
    await until('both sub-workflow runs', async () =>
      (await executions(p, a, `&workflowId=${callee}`)).filter((e) => e.status === 'success').length === 2
        ? true
        : undefined,
    );
    // 5 and 6: a failing webhook run and the error workflow it starts.
    const handler = await createWorkflow(
      p,
      {
        name: 'on error',
        nodes: [n8nNode('On Error', 'errorTrigger', 1, {})],
        connections: {},
      },
      a,
    );
    await deploy(p, a, {
      name: 'fails',
      nodes: [hook('a-fails', 'lastNode'), n8nNode('Boom', 'stopAndError', 1, { errorMessage: 'boom' })],
      connections: { Webhook: edge('Boom') },
      settings: { errorWorkflow: handler },
    });
    expect((await call(p, 'a-fails')).statusCode).toBe(422);
    await until('the error workflow run', async () =>
      (await executions(p, a, `&workflowId=${handler}`)).length === 1 ? true : undefined,
    );
    expect(await executions(p, a)).toHaveLength(6);

    // Execution 7 of the day: refused with the platform's 429 until the next UTC day.
    await deploy(p, a, plain('a-plain'));
    const refused = await call(p, 'a-plain');
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json()).toMatchObject({
      error: true,
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 6, quota: 'daily-executions' },
    });
    const midnight = nextUtcMidnight(p.clock.now());
    expect(Number(refused.headers['retry-after'])).toBe(
      midnight - Math.floor(p.clock.now().getTime() / 1000),
    );
    // A schedule fire is skipped (logged), a manual run and a retry are refused, nothing is stored.
    p.clock.set('2026-03-10T18:02:00Z');
    expect(await scheduler.tick()).toBe(0);
    const manual = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${callee}/run`,
      key: a,
      payload: {},
    });
    expect(manual.statusCode, manual.body).toBe(429);
    const failed = (await executions(p, a)).find((e) => e.status === 'error');
    const retry = await p.request({ method: 'POST', url: `/api/v1/executions/${failed?.id}/retry`, key: a });
    expect(retry.statusCode, retry.body).toBe(429);
    expect(await executions(p, a)).toHaveLength(6);

    // Another account's quota is its own.
    await deploy(p, b, plain('b-plain-q'));
    expect((await call(p, 'b-plain-q')).statusCode).toBe(200);
    // The next UTC day A starts again.
    p.clock.set('2026-03-11T00:00:05Z');
    expect((await call(p, 'a-plain')).statusCode).toBe(200);
  });

  it("a sub-workflow call past the quota fails its caller's node with the quota's message", async () => {
    const p = await platform({ WORKFLOW_DAILY_EXECUTIONS: '1' });
    const a = await otherAccountKey(p);
    const callee = await createWorkflow(
      p,
      {
        name: 'callee',
        nodes: [n8nNode('Called', 'executeWorkflowTrigger', 1.1, { inputSource: 'passthrough' })],
        connections: {},
      },
      a,
    );
    await deploy(p, a, {
      name: 'caller',
      nodes: [
        hook('a-one-call', 'lastNode'),
        n8nNode('Waited', 'executeWorkflow', 1.2, {
          workflowId: { __rl: true, value: callee, mode: 'id' },
          options: {},
        }),
      ],
      connections: { Webhook: edge('Waited') },
    });
    // The caller is the day's one execution; its callee would be the second.
    const answer = await call(p, 'a-one-call');
    expect(answer.statusCode, answer.body).toBe(422);
    expect(answer.json().message).toMatch(/daily execution quota of 1/);
    const runs = await executions(p, a);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'error', mode: 'webhook' });
  });
});
