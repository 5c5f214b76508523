import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, n8nNode, settled, workflowPlatform } from './support.js';

/** A downstream that answers after 1.2 s. */
let slow: Server;
let slowUrl = '';
beforeAll(async () => {
  slow = createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"late":true}'), 1200);
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
});
afterAll(() => new Promise<void>((r) => slow.close(() => r())));

function timed(path: string, settings: Record<string, unknown>) {
  return {
    name: `timed ${path}`,
    nodes: [
      n8nNode('Webhook', 'webhook', 2, { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} }),
      n8nNode('Slow', 'httpRequest', 4.2, { url: slowUrl, options: {} }),
      n8nNode('After', 'noOp', 1, {}),
    ],
    connections: {
      Webhook: { main: [[{ node: 'Slow', type: 'main', index: 0 }]] },
      Slow: { main: [[{ node: 'After', type: 'main', index: 0 }]] },
    },
    settings,
  };
}

describe.each(await testDialects())('settings.executionTimeout on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  it('stops a run past its timeout while a node still runs, as canceled with the reason', async () => {
    const id = await createWorkflow(p, timed('timeout-1s', { executionTimeout: 1 }));
    await activate(p, id);
    const res = await p.request({ method: 'POST', url: '/webhook/timeout-1s', key: null, payload: {} });
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('stopped before it answered');
    const list = (await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` })).json() as {
      data: Array<{ id: string }>;
    };
    const execution = (await settled(p, list.data[0]?.id ?? '')) as unknown as {
      status: string;
      data: { resultData: { runData: Record<string, unknown>; error: { message: string } } };
    };
    expect(execution.status).toBe('canceled');
    expect(execution.data.resultData.error.message).toBe(
      'The execution ran past its executionTimeout (1 s) and was stopped',
    );
    expect(Object.keys(execution.data.resultData.runData).sort()).toEqual(['Slow', 'Webhook']);
    // Cut off at 1 s, not after the downstream's 1.2 s: the node shows the reason and no output.
    const slowRun = (execution.data.resultData.runData.Slow as Array<Record<string, unknown>>)[0];
    expect(slowRun).toMatchObject({
      error: { message: expect.stringContaining('executionTimeout'), node: 'Slow' },
    });
    expect(slowRun?.executionTime).toBeLessThan(1200);
    expect(execution.data.resultData.runData.After).toBeUndefined();
  });

  it('lets a run within its timeout (or with -1) end normally', async () => {
    for (const [path, seconds] of [
      ['timeout-60s', 60],
      ['timeout-none', -1],
    ] as const) {
      await activate(p, await createWorkflow(p, timed(path, { executionTimeout: seconds })));
      const res = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: {} });
      expect(res.statusCode, path).toBe(200);
      expect(res.json()).toEqual({ late: true });
    }
  });

  it('refuses a timeout that is not whole seconds in range', async () => {
    for (const executionTimeout of [1.5, -2, 10_000_000, '60']) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: timed('timeout-bad', { executionTimeout }),
      });
      expect(res.statusCode, String(executionTimeout)).toBe(400);
      expect(JSON.stringify(res.json())).toContain('settings.executionTimeout');
    }
  });
});
