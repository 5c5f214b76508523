import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createCredential,
  createWorkflow,
  echoFlow,
  flow,
  otherAccountKey,
  settled,
  workflowPlatform,
} from './support.js';

type Task = {
  startTime: number;
  executionTime: number;
  executionStatus: string;
  data: { main: Array<Array<{ json: Record<string, unknown> }>> };
  error?: { message: string };
};
type N8nData = {
  resultData: { runData: Record<string, Task[]>; lastNodeExecuted: string | null; error: unknown };
};
type Execution = { id: string; status: string; data?: N8nData; workflowData?: { id: string } };

describe.each(await testDialects())("n8n's public API where it differs, on %s", (dialect) => {
  let p: TestPlatform;
  let other = '';
  let reader = '';
  let okFlow = '';
  let okExecution = '';
  let failedExecution = '';

  const run = async (path: string, payload: object = {}) => {
    const res = await p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload });
    return res;
  };

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    other = await otherAccountKey(p);
    reader = (
      await p.createKey({ name: 'reader', type: 'production', services: ['workflow'], role: 'Reader' })
    ).key;
    okFlow = await createWorkflow(p, echoFlow('n8n-ok'));
    await activate(p, okFlow);
    await run('n8n-ok', { message: 'hello' });
    const failFlow = await createWorkflow(
      p,
      flow('n8n fails', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'n8n-fail', responseMode: 'onReceived' } },
        { name: 'Boom', type: 'stopAndError', parameters: { errorMessage: 'boom' } },
      ]),
    );
    await activate(p, failFlow);
    failedExecution = ((await run('n8n-fail')).json() as { executionId: string }).executionId;
    await settled(p, failedExecution);
    const list = (
      await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${okFlow}` })
    ).json() as {
      data: Execution[];
    };
    okExecution = list.data[0]?.id as string;
  });
  afterAll(() => p.close());

  describe('X-N8N-API-KEY', () => {
    it('is read like the other key headers: a valid key passes, a bad one is 401, scopes still apply', async () => {
      const ok = await p.request({
        method: 'GET',
        url: '/api/v1/workflows',
        key: null,
        headers: { 'x-n8n-api-key': p.adminKey },
      });
      expect(ok.statusCode).toBe(200);
      const bad = await p.request({
        method: 'GET',
        url: '/api/v1/workflows',
        key: null,
        headers: { 'x-n8n-api-key': 'PROD_API_nope' },
      });
      expect(bad.statusCode).toBe(401);
      const readOnly = await p.request({
        method: 'POST',
        url: '/api/v1/variables',
        key: null,
        headers: { 'x-n8n-api-key': reader },
        payload: { key: 'x', value: 'y' },
      });
      expect(readOnly.statusCode).toBe(403);
    });

    it('is in the OpenAPI security scheme', async () => {
      const doc = (await p.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        components: { securitySchemes: { apiKey: { description: string } } };
      };
      expect(doc.components.securitySchemes.apiKey.description).toContain('X-N8N-API-KEY');
    });
  });

  describe("the specification's reading for X-WORKFLOW-API-KEY, n8n's for X-N8N-API-KEY", () => {
    const as = (header: string, url: string) =>
      p.request({ method: 'GET', url, key: null, headers: { [header]: p.adminKey } });

    it('workflow list entries: five fields for the specification, whole workflows for n8n', async () => {
      const spec = (await as('x-workflow-api-key', '/api/v1/workflows')).json() as {
        data: Array<Record<string, unknown>>;
      };
      expect(spec.data.length).toBeGreaterThanOrEqual(2);
      for (const e of spec.data)
        expect(Object.keys(e).sort()).toEqual(['active', 'createdAt', 'id', 'name', 'updatedAt']);
      const n8n = (await as('x-n8n-api-key', '/api/v1/workflows')).json() as {
        data: Array<Record<string, unknown>>;
      };
      for (const e of n8n.data) expect(e).toHaveProperty('nodes');
      // An explicit `fields` wins for either caller.
      const asked = (await as('x-workflow-api-key', '/api/v1/workflows?fields=name')).json() as {
        data: Array<Record<string, unknown>>;
      };
      for (const e of asked.data) expect(Object.keys(e).sort()).toEqual(['id', 'name']);
      // The detail view keeps nodes and connections for both.
      const one = (await as('x-workflow-api-key', `/api/v1/workflows/${okFlow}`)).json();
      expect(one).toHaveProperty('nodes');
      expect(one).toHaveProperty('connections');
    });

    it('execution detail: with workflowData and data for the specification, without for n8n', async () => {
      const spec = (await as('x-workflow-api-key', `/api/v1/executions/${okExecution}`)).json() as Execution;
      expect(spec.workflowData?.id).toBe(okFlow);
      expect(spec.data?.resultData.lastNodeExecuted).toBe('Set');
      const n8n = (await as('x-n8n-api-key', `/api/v1/executions/${okExecution}`)).json();
      expect(n8n).not.toHaveProperty('data');
      expect(n8n).not.toHaveProperty('workflowData');
      // includeData=false is honoured for the specification's caller too.
      const lean = (
        await as('x-workflow-api-key', `/api/v1/executions/${okExecution}?includeData=false`)
      ).json();
      expect(lean).not.toHaveProperty('data');
    });
  });

  describe('executions', () => {
    it('without includeData: no run data, no workflow (n8n’s default)', async () => {
      const one = (await p.request({ method: 'GET', url: `/api/v1/executions/${okExecution}` })).json();
      expect(one).toMatchObject({ id: okExecution, status: 'success' });
      expect(one).not.toHaveProperty('data');
      expect(one).not.toHaveProperty('workflowData');
      const list = (await p.request({ method: 'GET', url: '/api/v1/executions' })).json() as {
        data: Execution[];
      };
      expect(list.data.length).toBeGreaterThanOrEqual(2);
      for (const e of list.data) expect(e).not.toHaveProperty('data');
    });

    it('with includeData=true: the data in n8n’s structure, as n8n tooling reads it', async () => {
      const res = await p.request({
        method: 'GET',
        url: `/api/v1/executions/${okExecution}?includeData=true`,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json() as Execution;
      expect(body.workflowData?.id).toBe(okFlow);
      const set = body.data?.resultData.runData.Set?.[0] as Task;
      expect(set.data.main[0]?.[0]?.json).toMatchObject({ echoed: 'hello', ok: true });
      expect(typeof set.startTime).toBe('number');
      expect(set.startTime).toBeGreaterThan(0);
      expect(typeof set.executionTime).toBe('number');
      expect(set.executionStatus).toBe('success');
      expect(body.data?.resultData.lastNodeExecuted).toBe('Set');
      expect(body.data?.resultData.error).toBeNull();
      expect(body.data?.resultData.runData.Webhook?.[0]?.data.main[0]?.[0]?.json).toMatchObject({
        body: { message: 'hello' },
      });

      const failed = (
        await p.request({ method: 'GET', url: `/api/v1/executions/${failedExecution}?includeData=true` })
      ).json() as Execution;
      const boom = failed.data?.resultData.runData.Boom?.[0] as Task;
      expect(boom.executionStatus).toBe('error');
      expect(boom.error?.message).toBe('boom');
      expect(failed.data?.resultData.error).toMatchObject({ message: 'boom', node: 'Boom' });

      const list = (
        await p.request({ method: 'GET', url: `/api/v1/executions?includeData=true&workflowId=${okFlow}` })
      ).json() as { data: Execution[] };
      expect(list.data[0]?.data?.resultData.runData.Set?.[0]?.data.main[0]?.[0]?.json).toMatchObject({
        echoed: 'hello',
      });
      const without = (
        await p.request({ method: 'GET', url: `/api/v1/executions/${okExecution}?includeData=false` })
      ).json();
      expect(without).not.toHaveProperty('data');
    });

    it('status filter takes n8n’s names: canceled, crashed (a run cut off by a crash), unknown; others are 400', async () => {
      const waitFlow = await createWorkflow(
        p,
        flow('n8n wait', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'n8n-wait', responseMode: 'onReceived' } },
          { name: 'Wait', type: 'wait', parameters: { resume: 'timeInterval', amount: 6, unit: 'days' } },
        ]),
      );
      await activate(p, waitFlow);
      const waiting = ((await run('n8n-wait')).json() as { executionId: string }).executionId;
      expect((await settled(p, waiting)).status).toBe('waiting');
      const stop = await p.request({
        method: 'POST',
        url: `/api/v1/executions/${waiting}/stop`,
        payload: {},
      });
      expect(stop.statusCode).toBe(200);
      expect(stop.json()).toMatchObject({ id: waiting, status: 'canceled', finished: false });
      // Never resumed, and a stopped one cannot be stopped again.
      p.clock.advance(7 * 86_400);
      await p.ctx.apis.workflows?.maintenance.resumeDue();
      expect((await settled(p, waiting)).status).toBe('canceled');
      const again = await p.request({
        method: 'POST',
        url: `/api/v1/executions/${waiting}/stop`,
        payload: {},
      });
      expect(again.statusCode).toBe(409);

      // A run this process was running when it "died": recovery records it as crashed.
      await run('n8n-ok', { message: 'x' });
      const newest = (
        await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${okFlow}&limit=1` })
      ).json() as { data: Execution[] };
      const victim = newest.data[0]?.id as string;
      expect(victim).not.toBe(okExecution);
      await p.ctx.db.updateTable('executions').set({ status: 'running' }).where('id', '=', victim).execute();
      await p.ctx.apis.workflows?.maintenance.recover();

      const ids = async (status: string) => {
        const res = await p.request({ method: 'GET', url: `/api/v1/executions?status=${status}` });
        expect(res.statusCode).toBe(200);
        return (res.json() as { data: Execution[] }).data.map((e) => e.id);
      };
      expect(await ids('canceled')).toEqual([waiting]);
      expect(await ids('crashed')).toEqual([victim]);
      expect((await ids('error')).sort()).toEqual([failedExecution, victim].sort());
      expect(await ids('unknown')).toEqual([]);
      const bad = await p.request({ method: 'GET', url: '/api/v1/executions?status=exploded' });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toMatch(/status/);
    });

    it('includeData never shows a read-only key a resume URL’s signature (list or detail)', async () => {
      const approval = flow('n8n approval', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'n8n-approval', responseMode: 'onReceived' },
        },
        { name: 'Link', type: 'set', parameters: { values: { link: '={{ $execution.resumeUrl }}' } } },
        { name: 'Wait', type: 'wait', parameters: { resume: 'webhook' } },
      ]);
      const id = await createWorkflow(p, approval);
      await activate(p, id);
      const { executionId } = (await run('n8n-approval')).json() as { executionId: string };
      expect((await settled(p, executionId)).status).toBe('waiting');
      const url = `/api/v1/executions?workflowId=${id}&includeData=true`;
      const author = await p.request({ method: 'GET', url });
      expect(author.body).toMatch(/signature=\d+\./);
      const listed = await p.request({ method: 'GET', url, key: reader });
      expect(listed.statusCode).toBe(200);
      expect(listed.body).not.toMatch(/signature=\d+\./);
      expect(listed.body).toContain('signature=[hidden]');
      const one = await p.request({
        method: 'GET',
        url: `/api/v1/executions/${executionId}?includeData=true`,
        key: reader,
      });
      expect(one.json()).toMatchObject({ status: 'waiting', resumeUrl: null });
      expect(one.body).not.toMatch(/signature=\d+\./);
    });

    it('another account never sees, stops or lists these executions', async () => {
      expect(
        (
          await p.request({
            method: 'GET',
            url: `/api/v1/executions/${okExecution}?includeData=true`,
            key: other,
          })
        ).statusCode,
      ).toBe(404);
      expect(
        (
          await p.request({
            method: 'POST',
            url: `/api/v1/executions/${okExecution}/stop`,
            payload: {},
            key: other,
          })
        ).statusCode,
      ).toBe(404);
      const list = (
        await p.request({ method: 'GET', url: '/api/v1/executions?includeData=true', key: other })
      ).json() as { data: Execution[] };
      expect(list.data).toEqual([]);
    });
  });

  describe('unknown query parameters → 400 naming them', () => {
    // A valid body each, so the query is what is refused (and nothing is created).
    it.each([
      ['GET', '/api/v1/workflows?bogus=1', undefined],
      ['POST', '/api/v1/workflows?bogus=1', echoFlow('never-created')],
      ['GET', '/api/v1/workflows/wf_x?bogus=1', undefined],
      ['GET', '/api/v1/executions?bogus=1', undefined],
      ['GET', '/api/v1/executions/exe_x?bogus=1', undefined],
      ['POST', '/api/v1/executions/exe_x/stop?bogus=1', {}],
      ['DELETE', '/api/v1/executions/exe_x?bogus=1', undefined],
      ['GET', '/api/v1/credentials?bogus=1', undefined],
      ['GET', '/api/v1/credentials/cred_x?bogus=1', undefined],
      ['PATCH', '/api/v1/credentials/cred_x?bogus=1', { name: 'n' }],
      ['GET', '/api/v1/credentials/schema/httpHeaderAuth?bogus=1', undefined],
      ['GET', '/api/v1/variables?bogus=1', undefined],
      ['POST', '/api/v1/variables?bogus=1', { key: 'never', value: 'x' }],
      ['PUT', '/api/v1/variables/var_x?bogus=1', { value: 'x' }],
      ['DELETE', '/api/v1/variables/var_x?bogus=1', undefined],
    ] as const)('%s %s', async (method, url, payload) => {
      const res = await p.request({ method, url, ...(payload ? { payload } : {}) });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('bogus');
    });
  });

  describe('variables', () => {
    it('create, list, change, delete; n8n’s key and value limits; a key is unique in its account', async () => {
      const created = await p.request({
        method: 'POST',
        url: '/api/v1/variables',
        payload: { key: 'region', value: 'eu' },
      });
      expect(created.statusCode).toBe(201);
      const variable = created.json() as { id: string };
      expect(variable).toMatchObject({ key: 'region', value: 'eu', type: 'string', project: null });
      const dup = await p.request({
        method: 'POST',
        url: '/api/v1/variables',
        payload: { key: 'region', value: 'x' },
      });
      expect(dup.statusCode).toBe(409);
      for (const payload of [
        { key: 'bad-key', value: 'x' },
        { key: 'k'.repeat(51), value: 'x' },
        { key: 'long', value: 'v'.repeat(1_001) },
        { key: 'p', value: 'x', projectId: 'abc' },
      ]) {
        const res = await p.request({ method: 'POST', url: '/api/v1/variables', payload });
        expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      }
      expect(
        (
          await p.request({
            method: 'POST',
            url: '/api/v1/variables',
            payload: { key: 'k'.repeat(50), value: '' },
          })
        ).statusCode,
      ).toBe(201);

      const list = (await p.request({ method: 'GET', url: '/api/v1/variables' })).json() as {
        data: Array<{ key: string; value: string }>;
        nextCursor: string | null;
      };
      expect(list.data.map((v) => v.key)).toEqual(['region', 'k'.repeat(50)]);
      expect(list.nextCursor).toBeNull();
      const empty = (await p.request({ method: 'GET', url: '/api/v1/variables?state=empty' })).json() as {
        data: Array<{ key: string }>;
      };
      expect(empty.data.map((v) => v.key)).toEqual(['k'.repeat(50)]);

      const put = await p.request({
        method: 'PUT',
        url: `/api/v1/variables/${variable.id}`,
        payload: { value: 'us' },
      });
      expect(put.statusCode).toBe(204);
      const after = (await p.request({ method: 'GET', url: '/api/v1/variables?key=region' })).json() as {
        data: Array<{ value: string }>;
      };
      expect(after.data).toEqual([expect.objectContaining({ value: 'us' })]);

      const del = await p.request({ method: 'DELETE', url: `/api/v1/variables/${variable.id}` });
      expect(del.statusCode).toBe(204);
      expect(
        (await p.request({ method: 'DELETE', url: `/api/v1/variables/${variable.id}` })).statusCode,
      ).toBe(404);
    });

    it("another account neither sees nor changes an account's variables; a Reader key reads only", async () => {
      const mine = (
        await p.request({
          method: 'POST',
          url: '/api/v1/variables',
          payload: { key: 'secretish', value: 'mine' },
        })
      ).json() as { id: string };
      const theirs = (await p.request({ method: 'GET', url: '/api/v1/variables', key: other })).json() as {
        data: unknown[];
      };
      expect(theirs.data).toEqual([]);
      const put = await p.request({
        method: 'PUT',
        url: `/api/v1/variables/${mine.id}`,
        payload: { value: 'stolen' },
        key: other,
      });
      expect(put.statusCode).toBe(404);
      expect(
        (await p.request({ method: 'DELETE', url: `/api/v1/variables/${mine.id}`, key: other })).statusCode,
      ).toBe(404);
      // The same key in another account is another variable.
      expect(
        (
          await p.request({
            method: 'POST',
            url: '/api/v1/variables',
            payload: { key: 'secretish', value: 'theirs' },
            key: other,
          })
        ).statusCode,
      ).toBe(201);
      expect((await p.request({ method: 'GET', url: '/api/v1/variables', key: reader })).statusCode).toBe(
        200,
      );
      expect(
        (
          await p.request({
            method: 'PUT',
            url: `/api/v1/variables/${mine.id}`,
            payload: { value: 'r' },
            key: reader,
          })
        ).statusCode,
      ).toBe(403);
      expect(
        (await p.request({ method: 'DELETE', url: `/api/v1/variables/${mine.id}`, key: reader })).statusCode,
      ).toBe(403);
      const still = (await p.request({ method: 'GET', url: '/api/v1/variables?key=secretish' })).json() as {
        data: Array<{ value: string }>;
      };
      expect(still.data).toEqual([expect.objectContaining({ value: 'mine' })]);
    });

    it('expressions read them as $vars: the account’s own, and a change is seen by the next run', async () => {
      const greeting = (
        await p.request({
          method: 'POST',
          url: '/api/v1/variables',
          payload: { key: 'greeting', value: 'hi' },
        })
      ).json() as { id: string };
      const body = flow('vars', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'n8n-vars', responseMode: 'lastNode' } },
        {
          name: 'Set',
          type: 'set',
          parameters: { values: { greeting: '={{ $vars.greeting }}', other: '={{ $vars.secretish }}' } },
        },
      ]);
      await activate(p, await createWorkflow(p, body));
      const first = await run('n8n-vars');
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ greeting: 'hi', other: 'mine' });
      await p.request({
        method: 'PUT',
        url: `/api/v1/variables/${greeting.id}`,
        payload: { value: 'hello' },
      });
      expect((await run('n8n-vars')).json()).toMatchObject({ greeting: 'hello' });

      // The other account's workflow sees its own `secretish`, not this account's.
      const theirs = flow('their vars', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'n8n-vars-other', responseMode: 'lastNode' },
        },
        { name: 'Set', type: 'set', parameters: { values: { other: '={{ $vars.secretish }}' } } },
      ]);
      const theirId = await createWorkflow(p, theirs, other);
      const act = await p.request({
        method: 'POST',
        url: `/api/v1/workflows/${theirId}/activate`,
        key: other,
      });
      expect(act.statusCode).toBe(200);
      expect((await run('n8n-vars-other')).json()).toMatchObject({ other: 'theirs' });
    });
  });

  describe('credentials', () => {
    it('PATCH renames and replaces or merges the data (sealed again); the type stays', async () => {
      const id = await createCredential(p, 'patch-me', 'httpHeaderAuth', { name: 'X-Token', value: 'old' });
      const reveal = () => p.ctx.apis.workflows?.credentials.reveal(p.accountId, id);

      const renamed = await p.request({
        method: 'PATCH',
        url: `/api/v1/credentials/${id}`,
        payload: { name: 'patched' },
      });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toMatchObject({ id, name: 'patched', type: 'httpHeaderAuth' });
      expect(renamed.body).not.toContain('old');
      expect((await reveal())?.data).toEqual({ name: 'X-Token', value: 'old' });

      const replaced = await p.request({
        method: 'PATCH',
        url: `/api/v1/credentials/${id}`,
        payload: { data: { name: 'X-Key', value: 'new' }, type: 'httpHeaderAuth' },
      });
      expect(replaced.statusCode).toBe(200);
      expect((await reveal())?.data).toEqual({ name: 'X-Key', value: 'new' });
      const stored = await p.ctx.db
        .selectFrom('credentials')
        .select('data')
        .where('id', '=', id)
        .executeTakeFirst();
      expect(stored?.data).not.toContain('new');

      const merged = await p.request({
        method: 'PATCH',
        url: `/api/v1/credentials/${id}`,
        payload: { data: { value: 'newer' }, isPartialData: true },
      });
      expect(merged.statusCode).toBe(200);
      expect((await reveal())?.data).toEqual({ name: 'X-Key', value: 'newer' });

      for (const payload of [
        { type: 'httpBasicAuth', data: { user: 'u', password: 'p' } },
        { data: { value: 'only' } },
        { data: { name: 'a', value: 'b', extra: 'c' } },
        { isGlobal: true },
        {},
      ]) {
        const res = await p.request({ method: 'PATCH', url: `/api/v1/credentials/${id}`, payload });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      }
      expect((await reveal())?.data).toEqual({ name: 'X-Key', value: 'newer' });
      expect(
        (
          await p.request({
            method: 'PATCH',
            url: `/api/v1/credentials/${id}`,
            payload: { name: 'x' },
            key: other,
          })
        ).statusCode,
      ).toBe(404);
      expect(
        (
          await p.request({
            method: 'PATCH',
            url: `/api/v1/credentials/${id}`,
            payload: { name: 'x' },
            key: reader,
          })
        ).statusCode,
      ).toBe(403);
      await createCredential(p, 'taken', 'hmacSecret', { secret: 's' });
      const clash = await p.request({
        method: 'PATCH',
        url: `/api/v1/credentials/${id}`,
        payload: { name: 'taken' },
      });
      expect(clash.statusCode).toBe(409);
    });

    it('GET /credentials/schema/{type}: the JSON schema of each supported type; unknown → 404', async () => {
      const header = await p.request({ method: 'GET', url: '/api/v1/credentials/schema/httpHeaderAuth' });
      expect(header.statusCode).toBe(200);
      expect(header.json()).toEqual({
        additionalProperties: false,
        type: 'object',
        properties: { name: { type: 'string' }, value: { type: 'string' } },
        required: ['name', 'value'],
      });
      for (const type of [
        'httpBasicAuth',
        'httpQueryAuth',
        'httpBearerAuth',
        'hmacSecret',
        'githubApi',
        'searchApi',
      ]) {
        const res = await p.request({
          method: 'GET',
          url: `/api/v1/credentials/schema/${type}`,
          key: reader,
        });
        expect(res.statusCode, type).toBe(200);
        expect((res.json() as { required: string[] }).required.length).toBeGreaterThan(0);
      }
      for (const type of ['oAuth1Api', 'slackOAuth2Api', 'constructor', 'toString']) {
        const res = await p.request({ method: 'GET', url: `/api/v1/credentials/schema/${type}` });
        expect(res.statusCode, type).toBe(404);
      }
    });
  });
});
