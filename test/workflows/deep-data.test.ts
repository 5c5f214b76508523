import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { activate, createWorkflow, echoFlow, flow, settled, workflowPlatform } from './support.js';

// Data nested thousands of levels deep overflows every recursive walk (validation, JSON.stringify).
// Bodies are refused at the door, expression results past the limit fail their node, and data that
// cannot be stored fails its execution: none is a 500, none leaves an execution `running`.
const deepArray = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('deeply nested data', () => {
  let p: TestPlatform;
  let downstream: Server;
  beforeAll(async () => {
    p = await workflowPlatform('sqlite');
    downstream = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(deepArray(20_000));
    });
    await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}/deep`;
    await activate(p, await createWorkflow(p, echoFlow('deep')));
    const webhook = (path: string) => ({
      name: 'Webhook',
      type: 'webhook',
      parameters: { path, responseMode: 'lastNode' },
    });
    await activate(
      p,
      await createWorkflow(
        p,
        flow('builds deep data', [
          webhook('builds-deep'),
          {
            name: 'Set',
            type: 'set',
            parameters: {
              values: { deep: '={{ Array.from({ length: 300 }).reduce((a) => ({ a }), {}) }}' },
            },
          },
        ]),
      ),
    );
    await activate(
      p,
      await createWorkflow(
        p,
        flow('fetches deep data', [
          webhook('fetches-deep'),
          { name: 'Fetch', type: 'httpRequest', parameters: { method: 'GET', url } },
        ]),
      ),
    );
  });
  afterAll(async () => {
    await p.close();
    await new Promise((r) => downstream.close(r));
  });

  const post = (url: string, payload: string) =>
    p.request({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
  const latestExecution = async () =>
    (
      (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
        data: Array<{ id: string }>;
      }
    ).data[0]?.id;

  it('a workflow whose parameters nest past the limit → 400 naming the limit; a reasonable depth is kept', async () => {
    const body = (x: string) =>
      // Respond to Webhook's body takes any JSON (n8n's No Operation, the old test's node, takes no parameter).
      `{"name":"d","nodes":[{"name":"A","type":"n8n-nodes-base.respondToWebhook","typeVersion":1.1,"position":[0,0],"parameters":{"respondWith":"json","responseBody":${x}}}],"connections":{}}`;
    for (const x of [deepArray(200), deepArray(5000), deepObject(5000)]) {
      const res = await post('/api/v1/workflows', body(x));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR', details: { maxDepth: 128 } });
    }
    expect((await post('/api/v1/workflows', body(deepArray(100)))).statusCode).toBe(201);
  });

  it('a webhook body nested past the limit → 400, and no execution is made', async () => {
    const before = await latestExecution();
    for (const body of [deepArray(3000), deepArray(5000), deepObject(5000)]) {
      const res = await post('/webhook/deep', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR', details: { maxDepth: 128 } });
    }
    expect(await latestExecution()).toBe(before);
  });

  it('an expression whose result nests past the limit fails its node; the execution ends in error', async () => {
    const res = await post('/webhook/builds-deep', '{}');
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.json()).toMatchObject({ error: true });
    expect(JSON.stringify(res.json())).toMatch(/nests deeper than 128/);
    const done = await settled(p, (await latestExecution()) ?? '');
    expect(done.status).toBe('error');
  });

  it('a downstream answer too deep to store fails the execution instead of leaving it running', async () => {
    const res = await post('/webhook/fetches-deep', '{}');
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).not.toBe(504);
    expect(res.json()).toMatchObject({ error: true });
    const done = await settled(p, (await latestExecution()) ?? '');
    expect(done.status).toBe('error');
  });
});
