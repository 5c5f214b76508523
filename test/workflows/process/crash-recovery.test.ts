import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import { flow } from '../support.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  type PlatformProcess,
  sleep,
  slowServer,
  startServer,
  tempDir,
} from './processes.js';

type Entry = {
  id: string;
  status: string;
  mode: string;
  startedAt: string;
  stoppedAt: string | null;
  retryOf: string | null;
};

const BURST = 40;
const DELAY_MS = 300;

describe('a server killed mid-burst (in-process queue, SQLite file)', () => {
  let downstream: Awaited<ReturnType<typeof slowServer>> | undefined;
  afterAll(async () => {
    await cleanup();
    await downstream?.close();
  });

  it('keeps every accepted execution, re-runs unstarted ones, records running ones as crashed, retries', async () => {
    downstream = await slowServer(DELAY_MS);
    const slow = downstream;
    const key = generateKey('production');
    const dataDir = tempDir();
    const env = { ...baseEnv(dataDir), PLATFORM_BOOTSTRAP_KEY: key, WORKFLOW_CONCURRENCY: '2' };

    let server: PlatformProcess & { url: string } = await startServer(['serve'], env);
    let api = apiClient(server.url, key);
    const workflowId = await createAndActivate(
      api,
      flow('slow downstream', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'burst', responseMode: 'onReceived' } },
        {
          name: 'Call',
          type: 'httpRequest',
          parameters: { method: 'GET', url: `${slow.url}/slow`, query: { n: '={{ $json.body.n }}' } },
        },
        { name: 'Set', type: 'set', parameters: { values: { done: '={{ $json.n }}' } } },
      ]),
    );

    // The burst: one call every 30 ms; the kill comes once the downstream has answered a few and
    // still holds requests of running executions.
    const accepted: string[] = [];
    const calls: Array<Promise<void>> = [];
    const killTime = () => slow.state.completed >= 2 && slow.state.inFlight > 0;
    let sent = 0;
    for (; sent < BURST && !killTime(); sent++) {
      calls.push(
        fetch(`${server.url}/webhook/burst`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n: sent }),
        }).then(
          async (res) => {
            const body = (await res.json()) as { executionId?: string };
            if (res.status === 200 && body.executionId) accepted.push(body.executionId);
          },
          () => undefined, // cut off by the kill
        ),
      );
      await sleep(30);
    }
    // On a slow machine the whole burst may be out first: the queue then still has work for seconds.
    await eventually(async () => (killTime() ? true : undefined), 30_000, 'requests in flight downstream');
    const killedAt = Date.now();
    await server.kill('SIGKILL');
    await Promise.all(calls);
    expect(accepted.length).toBeGreaterThan(4);

    // Same data directory, new process: recovery at start.
    const restartedAt = Date.now();
    server = await startServer(['serve'], env);
    api = apiClient(server.url, key);
    expect(server.output()).toMatch(/workflow executions recovered/);

    const all = await eventually(
      async () => {
        const res = await api('GET', `/api/v1/executions?workflowId=${workflowId}&limit=250`);
        const data = res.json.data as Entry[];
        return data.some((e) => e.status === 'new' || e.status === 'running') ? undefined : data;
      },
      15_000,
      'all executions to stop',
    );
    const byId = new Map(all.map((e) => [e.id, e]));
    for (const id of accepted) expect(byId.has(id), `accepted execution ${id} is gone`).toBe(true);

    const crashed: string[] = [];
    let rerun = 0;
    for (const entry of all) {
      expect(['success', 'error']).toContain(entry.status);
      if (entry.status === 'error') {
        const detail = await api('GET', `/api/v1/executions/${entry.id}?includeData=true`);
        expect(detail.status).toBe(200);
        expect(detail.json.data.resultData.error.message).toMatch(/crashed/);
        crashed.push(entry.id);
      } else if (Date.parse(entry.startedAt) < killedAt && Date.parse(entry.stoppedAt ?? '') >= restartedAt) {
        // Accepted before the kill, finished after it: only the restarted process can have run it.
        rerun++;
      }
    }
    // Those the downstream was serving at the kill were running: recorded, not run again.
    expect(crashed.length).toBeGreaterThanOrEqual(1);
    expect(crashed.length).toBeLessThanOrEqual(2); // WORKFLOW_CONCURRENCY
    expect(rerun).toBeGreaterThanOrEqual(1);
    // Recovery repeated no side effect: each call reached the downstream at most once.
    for (const [n, count] of slow.state.calls) expect(count, `call n=${n}`).toBe(1);

    const crashedId = crashed[0] as string;
    const retried = await api('POST', `/api/v1/executions/${crashedId}/retry`);
    expect(retried.status).toBe(201);
    expect(retried.json).toMatchObject({ mode: 'retry', retryOf: crashedId });
    const retry = await eventually(
      async () => {
        const res = await api('GET', `/api/v1/executions/${retried.json.id}?includeData=true`);
        return ['new', 'running'].includes(res.json.status) ? undefined : res.json;
      },
      30_000,
      'the retry to stop',
    );
    expect(retry).toMatchObject({ status: 'success', mode: 'retry', retryOf: crashedId, finished: true });
    expect(retry.data.resultData.runData.Set).toBeDefined();
    await server.kill('SIGTERM');
  }, 60_000);
});
