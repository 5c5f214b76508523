import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import { n8nNode } from '../support.js';
import {
  type Api,
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  type PlatformProcess,
  startServer,
  tempDir,
} from './processes.js';

/**
 * A downstream whose answers the test steers: `/flaky` fails its first call and then answers;
 * `/hang` holds its first call (the process is killed meanwhile) and answers later ones at once.
 */
const calls = { flaky: 0, hang: 0 };
let downstream: Server;
let base = '';
beforeAll(async () => {
  downstream = createServer((req, res) => {
    res.on('error', () => undefined);
    req.socket.on('error', () => undefined);
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url?.startsWith('/flaky')) {
      calls.flaky++;
      if (calls.flaky === 1) reply(503, { error: 'not yet' });
      else reply(200, { flaky: calls.flaky });
      return;
    }
    calls.hang++;
    if (calls.hang > 1) reply(200, { hang: calls.hang });
  });
  await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await cleanup();
  downstream.closeAllConnections();
  await new Promise<void>((r) => downstream.close(() => r()));
});

/** n8n's run data: each node's runs, with items per output. */
type RunData = Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>>;
type Execution = {
  id: string;
  status: string;
  waitTill?: string | null;
  data?: { resultData: Record<string, unknown> };
};

async function executionsOf(api: Api, workflowId: string): Promise<Execution[]> {
  const res = await api('GET', `/api/v1/executions?workflowId=${workflowId}&includeData=true`);
  return res.json.data as Execution[];
}

describe('checkpointed runs survive a SIGKILL (in-process queue, SQLite file)', () => {
  it("resumes a retry's pending wait and a waited sub-workflow call after a restart", async () => {
    const key = generateKey('production');
    const env = { ...baseEnv(tempDir()), PLATFORM_BOOTSTRAP_KEY: key };
    let server: PlatformProcess & { url: string } = await startServer(['serve'], env);
    let api = apiClient(server.url, key);

    // A node that fails once, then waits 3 s before its next try.
    const retrying = await createAndActivate(api, {
      name: 'retry across a crash',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path: 'retry',
          responseMode: 'onReceived',
          options: {},
        }),
        n8nNode(
          'Flaky',
          'httpRequest',
          4.2,
          { url: `${base}/flaky`, options: {} },
          { retryOnFail: true, maxTries: 3, waitBetweenTries: 3000 },
        ),
      ],
      connections: { Webhook: { main: [[{ node: 'Flaky', type: 'main', index: 0 }]] } },
    });
    // A caller waiting for a callee whose call downstream hangs when the process dies.
    const callee = await createAndActivate(api, {
      name: 'callee',
      nodes: [
        n8nNode('Start', 'executeWorkflowTrigger', 1.1, { inputSource: 'passthrough' }),
        n8nNode('Hang', 'httpRequest', 4.2, { url: `${base}/hang`, options: {} }),
      ],
      connections: { Start: { main: [[{ node: 'Hang', type: 'main', index: 0 }]] } },
    });
    const caller = await createAndActivate(api, {
      name: 'caller',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path: 'call',
          responseMode: 'onReceived',
          options: {},
        }),
        n8nNode('Call', 'executeWorkflow', 1.2, {
          source: 'database',
          workflowId: { __rl: true, mode: 'id', value: callee },
          options: {},
        }),
        n8nNode('After', 'set', 3.4, {
          assignments: {
            assignments: [{ id: 'a', name: 'got', type: 'number', value: '={{ $json.hang }}' }],
          },
          options: {},
        }),
      ],
      connections: {
        Webhook: { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
        Call: { main: [[{ node: 'After', type: 'main', index: 0 }]] },
      },
    });

    for (const path of ['retry', 'call']) {
      const res = await fetch(`${server.url}/webhook/${path}`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(200);
    }
    // The first try failed (its retry waits 3 s) and the callee's call hangs: kill now.
    await eventually(
      async () => (calls.flaky === 1 && calls.hang === 1 ? true : undefined),
      30_000,
      'both calls',
    );
    // The retry's checkpoint is written after the failed try, before its wait: both running runs
    // show the time they resume at once checkpointed.
    await eventually(
      async () => {
        const runs = [...(await executionsOf(api, retrying)), ...(await executionsOf(api, caller))];
        return runs.length === 2 && runs.every((e) => e.status === 'running' && e.waitTill)
          ? true
          : undefined;
      },
      20_000,
      'both runs checkpointed',
    );
    await server.kill('SIGKILL');

    server = await startServer(['serve'], env);
    api = apiClient(server.url, key);
    expect(server.output()).toMatch(/"resumed":2/);

    const [retried] = await eventually(
      async () => {
        const list = await executionsOf(api, retrying);
        return list.every((e) => e.status === 'success') ? list : undefined;
      },
      15_000,
      'the retried run to end',
    );
    // One try before the kill, one after: the run went on where it was, not from the start.
    expect(calls.flaky).toBe(2);
    const flakyRuns = (retried?.data?.resultData.runData as RunData | undefined)?.Flaky;
    expect(flakyRuns).toHaveLength(1);
    expect(flakyRuns?.[0]?.data.main[0]?.[0]?.json).toEqual({ flaky: 2 });

    const [called] = await eventually(
      async () => {
        const list = await executionsOf(api, caller);
        return list.every((e) => e.status === 'success') ? list : undefined;
      },
      15_000,
      'the caller to end',
    );
    // The resumed caller called again; the callee run cut off by the kill is recorded as crashed.
    const after = (called?.data?.resultData.runData as RunData | undefined)?.After;
    expect(after?.[0]?.data.main[0]?.[0]?.json).toEqual({ got: 2 });
    const calleeRuns = await executionsOf(api, callee);
    expect(calleeRuns.map((e) => e.status).sort()).toEqual(['error', 'success']);
    expect(calls.hang).toBe(2);
    await server.kill('SIGTERM');
  }, 180_000); // two process starts, each up to a minute on a loaded machine
});
