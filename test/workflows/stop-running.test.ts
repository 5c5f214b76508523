import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsEnded } from '../helpers/metrics.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, n8nNode, workflowPlatform } from './support.js';

/** A downstream: `/slow` answers after 800 ms; `/after` counts its calls. */
let server: Server;
let base = '';
const calls = { slow: 0, after: 0 };
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/slow')) {
      calls.slow++;
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}'), 800);
      return;
    }
    calls.after++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"after":1}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe.each(await testDialects())('stopping a running execution on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { METRICS_ENABLED: 'true' });
  });
  afterAll(() => p.close());

  it('starts no node after the stop: the call after the slow one never happens', async () => {
    const path = `stop-${dialect}`;
    const id = await createWorkflow(p, {
      name: 'stoppable',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path,
          responseMode: 'onReceived',
          options: {},
        }),
        n8nNode('Slow', 'httpRequest', 4.2, { url: `${base}/slow`, options: {} }),
        n8nNode('After', 'httpRequest', 4.2, { url: `${base}/after`, options: {} }),
      ],
      connections: {
        Webhook: { main: [[{ node: 'Slow', type: 'main', index: 0 }]] },
        Slow: { main: [[{ node: 'After', type: 'main', index: 0 }]] },
      },
    });
    await activate(p, id);
    const before = { ...calls };
    const ended = await jobsEnded(p);
    const started = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: {} });
    const { executionId } = started.json() as { executionId: string };
    await until(() => calls.slow > before.slow, 'the slow call', 20_000);
    const stop = await p.request({ method: 'POST', url: `/api/v1/executions/${executionId}/stop` });
    expect(stop.statusCode, stop.body).toBe(200);
    expect(stop.json()).toMatchObject({ status: 'canceled' });
    // The run's job ends once the slow call is over (or cut short): a node it started would have
    // started by then.
    await until(async () => (await jobsEnded(p)) > ended, 'the stopped run to end', 20_000);
    expect(calls.slow - before.slow).toBe(1);
    expect(calls.after - before.after).toBe(0);
    const row = (await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}` })).json();
    expect(row).toMatchObject({ status: 'canceled' });
  });
});
