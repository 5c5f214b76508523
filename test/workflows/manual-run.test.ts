import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, otherAccountKey, workflowPlatform } from './support.js';

/** Manual Trigger → Edit Fields → Stop and Error (n8n's shapes), saved inactive. */
function manualFlow(pinData?: Record<string, unknown[]>) {
  return {
    name: 'manual',
    nodes: [
      {
        id: 'm1',
        name: "When clicking 'Test workflow'",
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'm2',
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [
              { id: 'a', name: 'greeting', value: '=Hello {{ $json.name ?? "world" }}', type: 'string' },
            ],
          },
          includeOtherFields: true,
          options: {},
        },
      },
      {
        id: 'm3',
        name: 'Fail',
        type: 'n8n-nodes-base.stopAndError',
        typeVersion: 1,
        position: [400, 0],
        parameters: { errorMessage: 'not in production' },
      },
    ],
    connections: {
      "When clicking 'Test workflow'": { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
      'Edit Fields': { main: [[{ node: 'Fail', type: 'main', index: 0 }]] },
    },
    ...(pinData ? { pinData } : {}),
  };
}

type RunData = Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>>;
interface Execution {
  id: string;
  status: string;
  mode: string;
  data: { resultData: { runData: RunData; error?: { message: string } } };
}
const outputOf = (e: Execution, node: string) =>
  (e.data.resultData.runData[node]?.[0]?.data.main[0] ?? []).map((i) => i.json);

describe.each(await testDialects())('manual runs (POST /api/v1/workflows/{id}/run) on %s', (dialect) => {
  let p: TestPlatform;
  let pinned: string;
  let plain: string;
  beforeAll(async () => {
    // The wait bounds the call, not the test: a run that waits answers 202 at once, and the first run
    // (the expression sandbox still warming) took 7.9 s at a load of 22, past the 5 s this once had.
    p = await workflowPlatform(dialect, { MANUAL_RUN_WAIT_MS: '45000' });
    plain = await createWorkflow(p, manualFlow());
    pinned = await createWorkflow(p, manualFlow({ Fail: [{ json: { pinned: true } }] }));
  });
  afterAll(() => p.close());

  const run = (id: string, payload: Record<string, unknown> = {}, key?: string) =>
    p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload, ...(key ? { key } : {}) });

  it('runs an inactive workflow from its trigger and answers with the ended execution', async () => {
    const res = await run(plain);
    expect(res.statusCode, res.body).toBe(200);
    const execution = res.json() as Execution;
    expect(execution).toMatchObject({ status: 'error', mode: 'manual' });
    expect(outputOf(execution, 'Edit Fields')).toEqual([{ greeting: 'Hello world' }]);
    expect(execution.data.resultData.error?.message).toBe('not in production');
    const listed = await p.request({ method: 'GET', url: `/api/v1/executions/${execution.id}` });
    expect(listed.json()).toMatchObject({ id: execution.id, mode: 'manual', status: 'error' });
  });

  it("uses the workflow's pinned data instead of running the pinned node", async () => {
    const execution = (await run(pinned)).json() as Execution;
    expect(execution.status).toBe('success');
    expect(outputOf(execution, 'Fail')).toEqual([{ pinned: true }]);
  });

  it("takes the call's pinned data over the workflow's, and null for none", async () => {
    const own = (
      await run(plain, { pinData: { 'Edit Fields': [{ from: 'call' }], Fail: [{}] } })
    ).json() as Execution;
    expect(own.status).toBe('success');
    expect(outputOf(own, 'Edit Fields')).toEqual([{ from: 'call' }]);
    expect(outputOf(own, 'Fail')).toEqual([{}]);
    expect(((await run(pinned, { pinData: null })).json() as Execution).status).toBe('error');
  });

  it('starts from a named node with the given items', async () => {
    const execution = (
      await run(plain, {
        startNode: 'Edit Fields',
        items: [{ name: 'Ada' }, { json: { name: 'Grace' } }],
        pinData: { Fail: [{ done: 1 }] },
      })
    ).json() as Execution;
    expect(execution.status).toBe('success');
    expect(outputOf(execution, 'Edit Fields')).toEqual([
      { name: 'Ada', greeting: 'Hello Ada' },
      { name: 'Grace', greeting: 'Hello Grace' },
    ]);
    expect(execution.data.resultData.runData["When clicking 'Test workflow'"]).toBeUndefined();
  });

  it('answers 202 with the execution while it has not ended (a wait node pauses it)', async () => {
    const body = manualFlow();
    body.nodes[2] = {
      id: 'm3',
      name: 'Fail',
      type: 'n8n-nodes-base.wait',
      typeVersion: 1.1,
      position: [400, 0],
      parameters: { amount: 1, unit: 'hours' } as never,
    };
    const id = await createWorkflow(p, body);
    const res = await run(id);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'waiting', mode: 'manual' });
  });

  it('refuses what it cannot run, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ startNode: 'Nope' }, "startNode no node 'Nope' in the workflow"],
      [{ pinData: { Ghost: [{}] } }, "no node 'Ghost' in the workflow"],
      [{ items: [1, 2] }, 'body.items'],
      [{ items: [{ json: [1] }] }, 'must be an object'],
      [{ other: true }, 'body.other'],
    ];
    for (const [payload, message] of cases) {
      const res = await run(plain, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(JSON.stringify(res.json()), JSON.stringify(payload)).toContain(message);
    }
    const noTrigger = manualFlow();
    noTrigger.nodes.shift();
    noTrigger.connections = { 'Edit Fields': noTrigger.connections['Edit Fields'] } as never;
    const res = await run(await createWorkflow(p, noTrigger));
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('the workflow has no trigger node');
  });

  it('is for writers of this account only', async () => {
    const reader = await p.createKey({
      name: 'reader',
      type: 'production',
      services: ['workflow'],
      role: 'Reader',
    });
    expect((await run(plain, {}, reader.key)).statusCode).toBe(403);
    expect((await run(plain, {}, await otherAccountKey(p))).statusCode).toBe(404);
    expect((await run('wf_missing')).statusCode).toBe(404);
  });
});
