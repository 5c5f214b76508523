import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, workflowPlatform } from './support.js';

/** Webhook → (Stop and Error when the body says so) with the given settings, answering last node. */
function flow(path: string, settings: Record<string, unknown>) {
  return {
    name: `save ${path}`,
    nodes: [
      {
        id: `${path}-w`,
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
      },
      {
        id: `${path}-c`,
        name: 'Maybe fail',
        type: 'n8n-nodes-base.code',
        typeVersion: 2,
        position: [200, 0],
        parameters: {
          jsCode:
            'if ($input.first().json.body.fail) throw new Error("asked to"); return [{ json: { ok: true } }];',
        },
      },
    ],
    connections: { Webhook: { main: [[{ node: 'Maybe fail', type: 'main', index: 0 }]] } },
    settings,
  };
}

describe.each(await testDialects())('which executions are kept (n8n save settings) on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const kept = async (id: string) =>
    (
      (await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` })).json() as {
        data: Array<{ status: string }>;
      }
    ).data.map((e) => e.status);
  const call = (path: string, fail: boolean) =>
    p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { fail } });

  it('drops successful runs with saveDataSuccessExecution none, after answering', async () => {
    const id = await createWorkflow(p, flow('save-ok-none', { saveDataSuccessExecution: 'none' }));
    await activate(p, id);
    const res = await call('save-ok-none', false);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await call('save-ok-none', true)).statusCode).toBe(422);
    expect(await kept(id)).toEqual(['error']);
  });

  it('drops failed runs with saveDataErrorExecution none', async () => {
    const id = await createWorkflow(p, flow('save-err-none', { saveDataErrorExecution: 'none' }));
    await activate(p, id);
    await call('save-err-none', true);
    await call('save-err-none', false);
    expect(await kept(id)).toEqual(['success']);
  });

  it('keeps everything by default and with DEFAULT', async () => {
    const id = await createWorkflow(
      p,
      flow('save-default', { saveDataSuccessExecution: 'DEFAULT', saveDataErrorExecution: 'all' }),
    );
    await activate(p, id);
    await call('save-default', false);
    await call('save-default', true);
    expect((await kept(id)).sort()).toEqual(['error', 'success']);
  });

  it('answers a manual run and then forgets it with saveManualExecutions false', async () => {
    const id = await createWorkflow(p, flow('save-manual', { saveManualExecutions: false }));
    const run = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { items: [{ body: { fail: false } }] },
    });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toMatchObject({ status: 'success', mode: 'manual' });
    expect(await kept(id)).toEqual([]);
  });

  it('refuses values n8n does not know', async () => {
    for (const [settings, path] of [
      [{ saveDataSuccessExecution: 'some' }, 'settings.saveDataSuccessExecution'],
      [{ saveDataErrorExecution: true }, 'settings.saveDataErrorExecution'],
      [{ saveManualExecutions: 'yes' }, 'settings.saveManualExecutions'],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: flow('bad', settings),
      });
      expect(res.statusCode, path).toBe(400);
      expect(JSON.stringify(res.json())).toContain(path);
    }
  });
});
