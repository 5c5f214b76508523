import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, otherAccountKey, workflowPlatform } from './support.js';

/**
 * n8n's dynamic webhooks: a path with `:name` segments is reached under the node's webhook id,
 * `/webhook/{webhookId}/users/42`, and the values arrive in `$json.params` (n8n's own look-up).
 */
function dynamicHook(name: string, webhookId: string, path: string, method = 'GET') {
  return {
    name,
    nodes: [
      {
        id: `${webhookId}-node`,
        webhookId,
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: { httpMethod: method, path, responseMode: 'lastNode', options: {} },
      },
      {
        id: `${webhookId}-set`,
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [
              { id: 'a', name: 'workflow', value: name, type: 'string' },
              { id: 'b', name: 'params', value: '={{ $json.params }}', type: 'object' },
            ],
          },
          options: {},
        },
      },
    ],
    connections: { Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
  };
}

const WID = '5f0c1a2e-7d44-4b8e-9a51-2f6c3d7e8a90';

describe.each(await testDialects())('n8n webhook path parameters on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await activate(p, await createWorkflow(p, dynamicHook('one', WID, 'users/:id')));
    await activate(p, await createWorkflow(p, dynamicHook('orders', WID, 'users/:id/orders/:orderId')));
    await activate(p, await createWorkflow(p, dynamicHook('fixed', WID, 'users/:id/orders/latest')));
    await activate(p, await createWorkflow(p, dynamicHook('post', `${WID}-post`, ':kind/:id', 'POST')));
  });
  afterAll(() => p.close());

  const get = (url: string) => p.request({ method: 'GET', url, key: null });

  it('passes the values in $json.params', async () => {
    const res = await get(`/webhook/${WID}/users/42`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ workflow: 'one', params: { id: '42' } });
  });

  it('matches by segment count and prefers the template with more fixed segments', async () => {
    expect((await get(`/webhook/${WID}/users/7/orders/o-1`)).json()).toEqual({
      workflow: 'orders',
      params: { id: '7', orderId: 'o-1' },
    });
    expect((await get(`/webhook/${WID}/users/7/orders/latest`)).json()).toEqual({
      workflow: 'fixed',
      params: { id: '7' },
    });
  });

  it('hands a percent-encoded value over decoded, once', async () => {
    const res = await get(`/webhook/${WID}/users/caf%C3%A9%2541`);
    expect(res.json()).toEqual({ workflow: 'one', params: { id: 'café%41' } });
  });

  it('answers 404 for a path no template fits, and 405 naming the methods for another method', async () => {
    for (const url of [
      `/webhook/${WID}/users`,
      `/webhook/${WID}/accounts/42`,
      `/webhook/${WID}/users/42/extra/1/2`,
      '/webhook/another-id/users/42',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ error: true, code: 'WEBHOOK_NOT_FOUND' });
    }
    const wrong = await p.request({ method: 'DELETE', url: `/webhook/${WID}/users/42`, key: null });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('GET');
  });

  it('never treats the template itself as a fixed path', async () => {
    // `users/:id` is stored as a template; calling it literally fills `id` with ':id'.
    const res = await get(`/webhook/${WID}/users/:id`);
    expect(res.json()).toEqual({ workflow: 'one', params: { id: ':id' } });
  });

  it('works with every segment a parameter', async () => {
    const res = await p.request({
      method: 'POST',
      url: `/webhook/${WID}-post/invoice/9`,
      key: null,
      payload: {},
    });
    expect(res.json()).toEqual({ workflow: 'post', params: { kind: 'invoice', id: '9' } });
  });

  it('stops answering once the workflow is deactivated', async () => {
    const id = await createWorkflow(p, dynamicHook('brief', 'brief-hook', 'items/:sku'));
    await activate(p, id);
    expect((await get('/webhook/brief-hook/items/a1')).statusCode).toBe(200);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
    expect((await get('/webhook/brief-hook/items/a1')).statusCode).toBe(404);
  });

  it('refuses malformed parameters at save, naming the segment', async () => {
    for (const [path, message] of [
      ['users/:id:x', "segment ':id:x' is not a path parameter"],
      ['users/a:b', "segment 'a:b' is not a path parameter"],
      ['users/:', "segment ':' is not a path parameter"],
      ['users/:id/:id', "path parameter ':id' appears twice"],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: dynamicHook('bad', 'bad-hook', path),
      });
      expect(res.statusCode, path).toBe(400);
      expect(JSON.stringify(res.json()), path).toContain(message);
    }
  });

  it('refuses to activate when the webhook id cannot stand as one URL segment', async () => {
    const id = await createWorkflow(p, dynamicHook('slash', 'a/b', 'users/:id'));
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('the webhook id must be letters, digits, - and _');
  });

  it('keeps another account off a template this account holds', async () => {
    const key = await otherAccountKey(p);
    const id = await createWorkflow(p, dynamicHook('thief', WID, 'users/:id'), key);
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, key });
    expect(res.statusCode).toBe(409);
    expect((await get(`/webhook/${WID}/users/1`)).json()).toMatchObject({ workflow: 'one' });
  });
});
