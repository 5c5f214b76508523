import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createCredential,
  createWorkflow,
  echoFlow,
  flow,
  otherAccountKey,
  workflowPlatform,
} from './support.js';

describe.each(await testDialects())('workflows API on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  it('creates an inactive workflow, with node ids and positions, readable by id', async () => {
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: echoFlow('created') });
    expect(res.statusCode).toBe(201);
    const wf = res.json() as Record<string, unknown> & { nodes: Array<Record<string, unknown>> };
    expect(wf.id).toMatch(/^wf_/);
    expect(wf.active).toBe(false);
    // Short names are import-time aliases: the saved workflow holds the prefixed or n8n type.
    expect(wf.nodes[0]).toMatchObject({
      name: 'Webhook',
      type: 'n8n-nodes-platform.webhook',
      typeVersion: 1,
      position: [0, 0],
    });
    expect(typeof wf.nodes[0]?.id).toBe('string');
    expect(wf.connections).toEqual({ Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } });
    const got = await p.request({ method: 'GET', url: `/api/v1/workflows/${wf.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(wf);
  });

  it("stores a short node name as n8n's type and version, its parameters in n8n's shape", async () => {
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: echoFlow('aliased') });
    expect(res.statusCode).toBe(201);
    const wf = res.json() as { id: string; nodes: Array<Record<string, unknown>> };
    expect(wf.nodes[1]).toMatchObject({
      name: 'Set',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      parameters: {
        mode: 'manual',
        includeOtherFields: true,
        assignments: {
          assignments: [
            { name: 'echoed', value: '={{ $json.body.message }}' },
            { name: 'ok', value: true, type: 'boolean' },
          ],
        },
      },
    });
    // An update with short names is resolved the same way.
    const put = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${wf.id}`,
      payload: echoFlow('aliased'),
    });
    expect(put.statusCode).toBe(200);
    const types = (put.json() as { nodes: Array<{ type: string }> }).nodes.map((n) => n.type);
    expect(types).toEqual(['n8n-nodes-platform.webhook', 'n8n-nodes-base.set']);
  });

  it('refuses an unknown node type with a 400 naming it, alias or not', async () => {
    const body = echoFlow('unknown-type');
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: { ...body, nodes: [body.nodes[0], { ...body.nodes[1], type: 'setFields' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/unknown node type 'setFields'/);
  });

  it('takes the key in X-WORKFLOW-API-KEY', async () => {
    const res = await p.app.inject({
      method: 'GET',
      url: '/api/v1/workflows',
      headers: { 'x-workflow-api-key': p.adminKey },
    });
    expect(res.statusCode).toBe(200);
  });

  it("lists entries in n8n's workflow shape; filters and pages", async () => {
    const a = await createWorkflow(p, echoFlow('list-a'));
    await activate(p, a);
    await createWorkflow(p, { ...echoFlow('list-b'), name: 'findable name' });
    const all = await p.request({ method: 'GET', url: '/api/v1/workflows' });
    const entries = (all.json() as { data: Array<Record<string, unknown>> }).data;
    expect(entries.length).toBeGreaterThanOrEqual(2);
    for (const e of entries)
      expect(Object.keys(e).sort()).toEqual(
        [
          'active',
          'connections',
          'createdAt',
          'id',
          'isArchived',
          'meta',
          'name',
          'nodes',
          'pinData',
          'settings',
          'staticData',
          'tags',
          'triggerCount',
          'updatedAt',
          'versionId',
        ].sort(),
      );

    const active = (await p.request({ method: 'GET', url: '/api/v1/workflows?active=true' })).json() as {
      data: Array<{ id: string; active: boolean }>;
    };
    expect(active.data.every((w) => w.active)).toBe(true);
    expect(active.data.map((w) => w.id)).toContain(a);
    const named = (
      await p.request({ method: 'GET', url: '/api/v1/workflows?name=findable%20name' })
    ).json() as {
      data: Array<{ name: string }>;
    };
    expect(named.data.map((w) => w.name)).toEqual(['findable name']);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await p.request({
        method: 'GET',
        url: `/api/v1/workflows?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      });
      const page = res.json() as { data: Array<{ id: string }>; nextCursor: string | null };
      expect(page.data.length).toBeLessThanOrEqual(1);
      seen.push(...page.data.map((w) => w.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(entries.map((e) => e.id));
  });

  it('refuses bad list parameters naming them', async () => {
    for (const query of ['limit=251', 'active=maybe', 'color=red', 'sort=nodes', 'cursor=zzz']) {
      const res = await p.request({ method: 'GET', url: `/api/v1/workflows?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    }
  });

  it('unknown id → 404 WORKFLOW_NOT_FOUND on every route', async () => {
    const id = 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz';
    for (const [method, url] of [
      ['GET', `/api/v1/workflows/${id}`],
      ['PUT', `/api/v1/workflows/${id}`],
      ['DELETE', `/api/v1/workflows/${id}`],
      ['POST', `/api/v1/workflows/${id}/activate`],
      ['POST', `/api/v1/workflows/${id}/deactivate`],
    ] as const) {
      const res = await p.request({ method, url, ...(method === 'PUT' ? { payload: echoFlow('x') } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({ error: true, code: 'WORKFLOW_NOT_FOUND' });
    }
  });

  it('another account cannot see or change the workflow (404)', async () => {
    const id = await createWorkflow(p, echoFlow('mine'));
    const other = await otherAccountKey(p);
    expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${id}`, key: other })).statusCode).toBe(
      404,
    );
    expect(
      (await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, key: other })).statusCode,
    ).toBe(404);
    const list = (await p.request({ method: 'GET', url: '/api/v1/workflows', key: other })).json() as {
      data: unknown[];
    };
    expect(list.data).toEqual([]);
  });

  it('a body of the wrong shape is 400 listing the fields', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: { name: 5, nodes: 'no', connections: [] },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { code: string; details: { fields: Array<{ field: string }> } };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details.fields.length).toBeGreaterThanOrEqual(2);
  });

  it('validation lists each problem: unknown type, duplicate name, missing target, bad parameter, an input into a trigger', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: {
        name: 'broken',
        nodes: [
          { name: 'A', type: 'webhook', parameters: { path: 'a' } },
          { name: 'B', type: 'webhook', parameters: { path: 'b' } },
          { name: 'C', type: 'noSuchNode', parameters: {} },
          { name: 'D', type: 'set', parameters: { values: 'not an object' } },
          { name: 'D', type: 'noOp', parameters: {} },
        ],
        connections: {
          A: {
            main: [
              [
                { node: 'Ghost', type: 'main', index: 0 },
                { node: 'B', type: 'main', index: 0 },
              ],
            ],
          },
        },
      },
    });
    expect(res.statusCode).toBe(400);
    const problems = (res.json() as { details: { problems: Array<{ path: string; message: string }> } })
      .details.problems;
    const text = JSON.stringify(problems);
    expect(text).toMatch(/noSuchNode/);
    expect(text).toMatch(/Ghost/);
    expect(text).toMatch(/duplicate|twice|unique/i);
    expect(text).toMatch(/node 'B' takes no input/);
    expect(problems.some((q) => q.path.includes('nodes[3]'))).toBe(true);
  });

  it("activate and deactivate are idempotent and answer the workflow (n8n's; the spec's id, name, active, updatedAt in it)", async () => {
    const id = await createWorkflow(p, echoFlow('idem'));
    for (let i = 0; i < 2; i++) {
      const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json() as object)).toEqual(
        expect.arrayContaining(['active', 'id', 'name', 'updatedAt', 'nodes', 'versionId']),
      );
      expect(res.json()).toMatchObject({ id, active: true });
    }
    for (let i = 0; i < 2; i++) {
      const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
      expect(res.json()).toMatchObject({ id, active: false });
    }
  });

  it('activating a workflow whose path and method another active one holds → 409', async () => {
    await activate(p, await createWorkflow(p, echoFlow('taken')));
    const second = await createWorkflow(p, echoFlow('taken'));
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${second}/activate` });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'CONFLICT', details: { path: 'taken', method: 'POST' } });
    // Same path, other method: allowed.
    const getter = await createWorkflow(p, echoFlow('taken', { httpMethod: 'GET' }));
    expect(
      (await p.request({ method: 'POST', url: `/api/v1/workflows/${getter}/activate` })).statusCode,
    ).toBe(200);
  });

  it('activation needs the credentials a workflow names, of the right type', async () => {
    const id = await createWorkflow(
      p,
      echoFlow('needs-cred', { authentication: 'hmac', credential: 'later-secret' }),
    );
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(/later-secret/);
    await createCredential(p, 'later-secret', 'httpHeaderAuth', { name: 'X-K', value: 'v' });
    const wrongType = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
    expect(wrongType.statusCode).toBe(400);
    expect(JSON.stringify(wrongType.json())).toMatch(/hmacSecret/);
    const noCred = await createWorkflow(p, echoFlow('no-cred', { authentication: 'basicAuth' }));
    expect(
      (await p.request({ method: 'POST', url: `/api/v1/workflows/${noCred}/activate` })).statusCode,
    ).toBe(400);
  });

  it('PUT replaces; an active workflow re-registers its webhooks', async () => {
    const id = await createWorkflow(p, echoFlow('before'));
    await activate(p, id);
    expect((await p.app.inject({ method: 'POST', url: '/webhook/before', payload: {} })).statusCode).toBe(
      200,
    );
    const res = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: echoFlow('after'),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, active: true, name: 'echo after' });
    expect((await p.app.inject({ method: 'POST', url: '/webhook/before', payload: {} })).statusCode).toBe(
      404,
    );
    const after = await p.app.inject({ method: 'POST', url: '/webhook/after', payload: { message: 'm' } });
    expect(after.json()).toMatchObject({ echoed: 'm' });
  });

  it('a PUT that fails validation or takes a held path changes nothing', async () => {
    await activate(p, await createWorkflow(p, echoFlow('held')));
    const id = await createWorkflow(p, echoFlow('mine-to-keep'));
    await activate(p, id);
    const clash = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: echoFlow('held'),
    });
    expect(clash.statusCode).toBe(409);
    const bad = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: { name: 'x', nodes: [{ name: 'A', type: 'nope' }], connections: {} },
    });
    expect(bad.statusCode).toBe(400);
    const got = (await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).json() as {
      name: string;
    };
    expect(got.name).toBe('echo mine-to-keep');
    expect(
      (await p.app.inject({ method: 'POST', url: '/webhook/mine-to-keep', payload: {} })).statusCode,
    ).toBe(200);
  });

  it('DELETE removes the workflow and frees its path', async () => {
    const id = await createWorkflow(p, echoFlow('doomed'));
    await activate(p, id);
    const res = await p.request({ method: 'DELETE', url: `/api/v1/workflows/${id}` });
    expect(res.statusCode).toBe(200);
    expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).statusCode).toBe(404);
    expect((await p.app.inject({ method: 'POST', url: '/webhook/doomed', payload: {} })).statusCode).toBe(
      404,
    );
  });

  it('roles: Reader reads but cannot create; Writer cannot delete', async () => {
    const reader = await p.createKey({
      name: 'r',
      type: 'production',
      role: 'Reader',
      services: ['workflow'],
    });
    const writer = await p.createKey({
      name: 'w',
      type: 'production',
      role: 'Writer',
      services: ['workflow'],
    });
    expect((await p.request({ method: 'GET', url: '/api/v1/workflows', key: reader.key })).statusCode).toBe(
      200,
    );
    const created = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      key: reader.key,
      payload: echoFlow('r'),
    });
    expect(created.statusCode).toBe(403);
    const id = await createWorkflow(p, echoFlow('w'), writer.key);
    expect(
      (await p.request({ method: 'DELETE', url: `/api/v1/workflows/${id}`, key: writer.key })).statusCode,
    ).toBe(403);
  });

  it('workflow definitions are stored as given: a multi-branch flow round-trips', async () => {
    const body = flow(
      'branches',
      [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'branches', responseMode: 'lastNode' } },
        {
          name: 'If',
          type: 'if',
          parameters: { conditions: [{ value1: '={{ $json.body.n }}', operation: 'gt', value2: 5 }] },
        },
        { name: 'Big', type: 'set', parameters: { values: { size: 'big' }, keepOnlySet: true } },
        { name: 'Small', type: 'set', parameters: { values: { size: 'small' }, keepOnlySet: true } },
      ],
      [
        ['Webhook', 'If'],
        ['If', 'Big', 0],
        ['If', 'Small', 1],
      ],
    );
    const id = await createWorkflow(p, body);
    await activate(p, id);
    const big = await p.app.inject({ method: 'POST', url: '/webhook/branches', payload: { n: 9 } });
    const small = await p.app.inject({ method: 'POST', url: '/webhook/branches', payload: { n: 1 } });
    expect(big.json()).toEqual({ size: 'big' });
    expect(small.json()).toEqual({ size: 'small' });
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/v1/workflows', service: 'workflow' });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/v1/workflows',
      service: 'workflow',
      payload: echoFlow('auth'),
    });
  });
});
