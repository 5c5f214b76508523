import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsEnded } from '../helpers/metrics.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, otherAccountKey, settled, workflowPlatform } from './support.js';

const PUBLIC_URL = 'https://flows.example.com';

const node = (name: string, type: string, parameters: Record<string, unknown>, x: number) => ({
  id: name.toLowerCase().replace(/\W+/g, '-'),
  name,
  type,
  typeVersion: 1,
  position: [x, 0],
  parameters,
});
const edge = (to: string) => ({ main: [[{ node: to, type: 'main', index: 0 }]] });

/** Webhook → Stop and Error (or → a Set that succeeds), naming `errorWorkflow` in its settings. */
function watchedFlow(path: string, errorWorkflow: unknown, fails = true) {
  const last = fails
    ? node('Boom', 'n8n-nodes-base.stopAndError', { errorMessage: '=boom {{ $json.body.n }}' }, 200)
    : {
        ...node('Fine', 'n8n-nodes-base.set', { assignments: { assignments: [] }, options: {} }, 200),
        typeVersion: 3.4,
      };
  return {
    name: `watched ${path}`,
    nodes: [
      {
        ...node(
          'Webhook',
          'n8n-nodes-base.webhook',
          { httpMethod: 'POST', path, responseMode: 'lastNode' },
          0,
        ),
        typeVersion: 2,
      },
      last,
    ],
    connections: { Webhook: edge(last.name) },
    settings: { errorWorkflow },
  };
}

/** Error Trigger → Set copying the failure's message (n8n's error workflow), or → Stop and Error. */
function errorFlow(name: string, fails = false, settings: Record<string, unknown> = {}) {
  const next = fails
    ? node('Fail Again', 'n8n-nodes-base.stopAndError', { errorMessage: 'the handler failed too' }, 200)
    : {
        ...node(
          'Copy',
          'n8n-nodes-base.set',
          {
            assignments: {
              assignments: [
                { id: 'm', name: 'failure', value: '={{ $json.execution.error.message }}', type: 'string' },
              ],
            },
            includeOtherFields: true,
            options: {},
          },
          200,
        ),
        typeVersion: 3.4,
      };
  return {
    name,
    nodes: [node('Error Trigger', 'n8n-nodes-base.errorTrigger', {}, 0), next],
    connections: { 'Error Trigger': edge(next.name) },
    settings,
  };
}

type RunData = Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>>;
interface Execution {
  id: string;
  status: string;
  mode: string;
  workflowId: string;
  data: { resultData: { runData: RunData } };
}

describe.each(await testDialects())('error workflows (settings.errorWorkflow) on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { PUBLIC_URL, METRICS_ENABLED: 'true' });
  });
  afterAll(() => p.close());

  const executionsOf = async (workflowId: string, key?: string): Promise<Execution[]> => {
    const res = await p.request({
      method: 'GET',
      url: `/api/v1/executions?workflowId=${workflowId}`,
      ...(key ? { key } : {}),
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Execution[] }).data;
  };
  /** The error workflow run is queued before the failed call is answered; it then runs on its own. */
  const onlyRunOf = async (workflowId: string): Promise<Execution> => {
    const runs = await executionsOf(workflowId);
    expect(runs).toHaveLength(1);
    return (await settled(p, (runs[0] as Execution).id)) as unknown as Execution;
  };
  const watched = async (path: string, errorWorkflow: unknown, fails = true) => {
    const id = await createWorkflow(p, watchedFlow(path, errorWorkflow, fails));
    await activate(p, id);
    return id;
  };
  const call = async (path: string, n: number) => {
    const res = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { n } });
    return res;
  };
  /** Until `count` more execution jobs have ended than `from`: their error workflows, if any, are queued. */
  const jobsEndedPast = (from: number, count: number) =>
    until(async () => (await jobsEnded(p)) >= from + count, `${count} runs to end`, 20_000);

  it('a failed execution starts the inactive error workflow with n8n’s error payload', async () => {
    const handler = await createWorkflow(p, errorFlow('on failure'));
    const failing = await watched('ew-fails', handler);
    const res = await call('ew-fails', 7);
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    const [failed] = await executionsOf(failing);
    expect(failed).toMatchObject({ status: 'error', mode: 'webhook' });
    const failedId = (failed as Execution).id;

    const run = await onlyRunOf(handler);
    expect(run).toMatchObject({ mode: 'error', status: 'success', workflowId: handler });
    const trigger = run.data.resultData.runData['Error Trigger']?.[0]?.data.main[0] ?? [];
    expect(trigger.map((i) => i.json)).toEqual([
      {
        execution: {
          id: failedId,
          url: `${PUBLIC_URL}/api/v1/executions/${failedId}`,
          error: { message: 'boom 7' },
          lastNodeExecuted: 'Boom',
          mode: 'webhook',
        },
        workflow: { id: failing, name: 'watched ew-fails' },
      },
    ]);
    const copied = run.data.resultData.runData.Copy?.[0]?.data.main[0]?.[0]?.json;
    expect(copied?.failure).toBe('boom 7');
  });

  it('a successful execution starts nothing', async () => {
    const handler = await createWorkflow(p, errorFlow('never needed'));
    await watched('ew-fine', handler, false);
    const ended = await jobsEnded(p);
    const res = await call('ew-fine', 1);
    expect(res.statusCode, res.body).toBe(200);
    await jobsEndedPast(ended, 1);
    expect(await executionsOf(handler)).toEqual([]);
  });

  it('a failing error workflow starts no other, nor itself', async () => {
    // `second` names `first` back and `first` names `second`: only the mode guard stops a loop.
    const first = await createWorkflow(p, errorFlow('fails too', true));
    const second = await createWorkflow(p, errorFlow('second handler', false, { errorWorkflow: first }));
    const putFirst = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${first}`,
      payload: errorFlow('fails too', true, { errorWorkflow: second }),
    });
    expect(putFirst.statusCode, putFirst.body).toBe(200);
    const itself = await createWorkflow(p, errorFlow('names itself', true));
    const putItself = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${itself}`,
      payload: errorFlow('names itself', true, { errorWorkflow: itself }),
    });
    expect(putItself.statusCode, putItself.body).toBe(200);

    await watched('ew-loop', first);
    await watched('ew-self', itself);
    const ended = await jobsEnded(p);
    await call('ew-loop', 1);
    await call('ew-self', 2);
    expect(await onlyRunOf(first)).toMatchObject({ mode: 'error', status: 'error' });
    expect(await onlyRunOf(itself)).toMatchObject({ mode: 'error', status: 'error' });
    // The two failed calls and their two error runs have ended: any further error run is queued.
    await jobsEndedPast(ended, 4);
    expect(await executionsOf(second)).toEqual([]);
    expect(await executionsOf(first)).toHaveLength(1);
    expect(await executionsOf(itself)).toHaveLength(1);
  });

  it('another account’s workflow, a missing one or one without an Error Trigger is not started', async () => {
    const otherKey = await otherAccountKey(p);
    const theirs = await createWorkflow(p, errorFlow('not yours'), otherKey);
    const plain = await createWorkflow(p, {
      name: 'no trigger',
      nodes: [node('Only', 'n8n-nodes-base.noOp', {}, 0)],
      connections: {},
    });
    await watched('ew-theirs', theirs);
    await watched('ew-missing', 'wf_does_not_exist');
    await watched('ew-plain', plain);
    for (const path of ['ew-theirs', 'ew-missing', 'ew-plain']) {
      const res = await call(path, 3);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
    }
    const rows = await p.ctx.db
      .selectFrom('executions')
      .select(['workflow_id', 'mode'])
      .where('mode', '=', 'error')
      .where('workflow_id', 'in', [theirs, plain])
      .execute();
    expect(rows).toEqual([]);
    expect(await executionsOf(theirs, otherKey)).toEqual([]);
  });

  it('a bad errorWorkflow setting is a 400 naming settings.errorWorkflow; DEFAULT means none', async () => {
    for (const bad of [42, { id: 'x' }, 'w'.repeat(101)]) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: watchedFlow('ew-bad', bad),
      });
      expect(res.statusCode, res.body).toBe(400);
      const problems = (res.json() as { details: { problems: Array<{ path: string }> } }).details.problems;
      expect(problems.map((q) => q.path)).toContain('settings.errorWorkflow');
    }
    const none = await watched('ew-default', 'DEFAULT');
    expect((await call('ew-default', 1)).statusCode).toBeGreaterThanOrEqual(400);
    expect(await executionsOf(none)).toHaveLength(1);
  });
});
