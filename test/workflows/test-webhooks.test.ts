import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, otherAccountKey, workflowPlatform } from './support.js';

/** Webhook (answers with the last node) → Edit Fields, as n8n exports it. */
function hooked(path: string, name = `hook ${path}`) {
  return {
    name,
    nodes: [
      {
        id: `${path}-w`,
        webhookId: `${path}-w`,
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
      },
      {
        id: `${path}-s`,
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [{ id: 'a', name: 'mode', value: '={{ $execution.mode }}', type: 'string' }],
          },
          options: {},
        },
      },
    ],
    connections: { Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
  };
}

describe.each(await testDialects())('test webhooks (/webhook-test/…) on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { TEST_WEBHOOK_SECONDS: '120' });
  });
  afterAll(() => p.close());

  const listen = (id: string, key?: string) =>
    p.request({ method: 'POST', url: `/api/v1/workflows/${id}/listen`, ...(key ? { key } : {}) });
  const call = (url: string) => p.request({ method: 'POST', url, key: null, payload: { n: 1 } });

  it('serves an inactive workflow for one call after listen, with mode test', async () => {
    const id = await createWorkflow(p, hooked('tw-one'));
    const before = await call('/webhook-test/tw-one');
    expect(before.statusCode).toBe(404);
    expect(before.json().message).toContain('POST /api/v1/workflows/{id}/listen');
    const listening = await listen(id);
    expect(listening.statusCode, listening.body).toBe(200);
    expect(listening.json()).toMatchObject({
      id,
      webhooks: [{ method: 'POST', path: '/webhook-test/tw-one' }],
    });
    const res = await call('/webhook-test/tw-one');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ mode: 'test' });
    const again = await call('/webhook-test/tw-one');
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('WEBHOOK_NOT_FOUND');
    // The production URL of an inactive workflow answers nothing.
    expect((await call('/webhook/tw-one')).statusCode).toBe(404);
    const runs = (await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` })).json() as {
      data: Array<{ mode: string }>;
    };
    expect(runs.data.map((r) => r.mode)).toEqual(['test']);
  });

  it('gives one of two racing calls the run and the other a 404', async () => {
    const id = await createWorkflow(p, hooked('tw-race'));
    await listen(id);
    const answers = await Promise.all([call('/webhook-test/tw-race'), call('/webhook-test/tw-race')]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 404]);
  });

  it('stops listening when the window ends; listening again restarts it', async () => {
    const id = await createWorkflow(p, hooked('tw-window'));
    await listen(id);
    p.clock.advance(121);
    expect((await call('/webhook-test/tw-window')).statusCode).toBe(404);
    await listen(id);
    p.clock.advance(60);
    expect((await call('/webhook-test/tw-window')).statusCode).toBe(200);
  });

  it('leaves an active workflow’s production webhook alone', async () => {
    const id = await createWorkflow(p, hooked('tw-live'));
    await activate(p, id);
    await listen(id);
    expect((await call('/webhook/tw-live')).json()).toEqual({ mode: 'webhook' });
    expect((await call('/webhook-test/tw-live')).json()).toEqual({ mode: 'test' });
    expect((await call('/webhook/tw-live')).json()).toEqual({ mode: 'webhook' });
  });

  it('refuses a second workflow on a listening path, one without a webhook, and outsiders', async () => {
    const first = await createWorkflow(p, hooked('tw-busy', 'first'));
    const second = await createWorkflow(p, hooked('tw-busy', 'second'));
    await listen(first);
    const busy = await listen(second);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().message).toContain(first);

    const bare = await createWorkflow(p, {
      name: 'no webhook',
      nodes: [
        {
          id: 'm',
          name: 'Manual',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
      ],
      connections: {},
    });
    expect((await listen(bare)).statusCode).toBe(400);

    expect((await listen(first, await otherAccountKey(p))).statusCode).toBe(404);
    const reader = await p.createKey({
      name: 'r',
      type: 'production',
      services: ['workflow'],
      role: 'Reader',
    });
    expect((await listen(first, reader.key)).statusCode).toBe(403);
  });
});
