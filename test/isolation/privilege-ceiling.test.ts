import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects, uniqueName } from '../helpers/services.js';
import { asSession, ownerSession, sessionOf, tokenOf } from '../portal/support.js';
import { createCredential, createWorkflow, echoFlow } from '../workflows/support.js';

/**
 * Issue 27, item 4: nothing a caller creates holds more than the caller. Every creation route is
 * tried with a weaker creator; the audit's chain (a core-only key invites an admin, who makes an
 * Admin key for all services) breaks at its first link; a flow or an agent cannot run a workflow its
 * saver could not run directly (an HMAC-protected one included).
 */
describe.each(await testDialects())('privilege ceilings on %s', (dialect) => {
  let p: TestPlatform;
  let hmacWorkflow: string;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { QUEUE_PREFIX: uniqueName('q') } });
    const secret = await createCredential(p, 'store-hmac', 'hmacSecret', { secret: 'shh' });
    hmacWorkflow = await createWorkflow(
      p,
      echoFlow('signed-orders', {
        authentication: 'hmac',
        credential: secret,
        options: { hmacHeader: 'X-Store-Hmac-SHA256' },
      }),
    );
  });
  afterAll(async () => {
    await p?.close();
  });

  const key = (body: Record<string, unknown>) =>
    p.createKey({ name: 'k', type: 'production', ...body } as Record<string, unknown>);
  const post = (url: string, payload: unknown, k: string) =>
    p.request({ method: 'POST', url, payload: payload as object, key: k });
  const forbidden = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    return res.json().details as Record<string, unknown>;
  };
  const flowCount = async () =>
    ((await p.request({ method: 'GET', url: '/api/v1/chatflows' })).json() as unknown[]).length;
  const executionCount = async () =>
    ((await p.request({ method: 'GET', url: '/api/v1/executions?limit=250' })).json() as { data: unknown[] })
      .data.length;

  describe('members and invites', () => {
    it("the audit's chain: a core-only Admin key cannot invite an admin (nor anyone)", async () => {
      const core = await key({ role: 'Admin', services: ['core'] });
      for (const role of ['admin', 'developer', 'viewer']) {
        const res = await post('/v1/members/invites', { email: `${role}-x@example.com`, role }, core.key);
        expect(forbidden(res).scopes).toEqual(expect.arrayContaining(['workflow:read']));
      }
      const invited = await p.ctx.db.selectFrom('member_tokens').select('email').execute();
      expect(invited.map((r) => r.email)).not.toContain('admin-x@example.com');
    });

    it('an Admin key for all services but with a model list, a budget, address rules or development type cannot invite', async () => {
      const bounded = [
        await key({ role: 'Admin', services: ['*'], models: ['builtin/extractive'] }),
        await key({ role: 'Admin', services: ['*'], dailyTokenBudget: 1000 }),
        await key({ role: 'Admin', services: ['*'], allowedIps: ['127.0.0.1/32'] }),
        await key({ role: 'Admin', services: ['*'], type: 'development' }),
      ];
      const expected = ['models', 'dailyTokenBudget', 'allowedIps', 'type'];
      for (const [i, k] of bounded.entries()) {
        const res = await p.request({
          method: 'POST',
          url: '/v1/members/invites',
          key: k.key,
          payload: { email: `bounded${i}@example.com`, role: 'viewer' },
          remoteAddress: '127.0.0.1',
        });
        expect(forbidden(res).exceeds).toEqual([expected[i]]);
      }
    });

    it('an unbounded Admin key for all services may invite; the role is what the key holds', async () => {
      const full = await key({ role: 'Admin', services: ['*'] });
      const res = await post('/v1/members/invites', { email: 'full@example.com', role: 'admin' }, full.key);
      expect(res.statusCode, res.body).toBe(201);
    });

    it('a core-only Admin key cannot promote, demote or remove a member', async () => {
      const owner = await ownerSession(p);
      const invited = await asSession(p, owner, {
        method: 'POST',
        url: '/v1/members/invites',
        payload: { email: 'dev@example.com', role: 'developer' },
      });
      const dev = sessionOf(
        await p.request({
          method: 'POST',
          url: '/v1/auth/invites/accept',
          key: null,
          payload: {
            token: tokenOf(invited.json().inviteUrl),
            name: 'Dev',
            password: 'copper meadow signal 92',
          },
        }),
      );
      const core = await key({ role: 'Admin', services: ['core'] });
      const promote = await p.request({
        method: 'PATCH',
        url: `/v1/members/${dev.memberId}`,
        key: core.key,
        payload: { role: 'admin' },
      });
      forbidden(promote);
      forbidden(await p.request({ method: 'DELETE', url: `/v1/members/${dev.memberId}`, key: core.key }));
      const row = await p.ctx.db
        .selectFrom('members')
        .select('role')
        .where('id', '=', dev.memberId)
        .executeTakeFirstOrThrow();
      expect(row.role).toBe('developer');
      // A developer's session cannot invite at all, and nobody becomes owner.
      const byDev = await asSession(p, dev, {
        method: 'POST',
        url: '/v1/members/invites',
        payload: { email: 'dev2@example.com', role: 'admin' },
      });
      expect(byDev.statusCode).toBe(403);
    });
  });

  describe('keys and customer tokens', () => {
    it('a key cannot create a key above it: scope, service, type, expiry, quota, addresses, models, budget', async () => {
      const creator = await key({
        role: 'Admin',
        services: ['core', 'llm'],
        type: 'development',
        dailyQuota: 50,
        allowedIps: ['127.0.0.1/32'],
        models: ['builtin/extractive'],
        dailyTokenBudget: 100,
      });
      const base = { name: 'child', type: 'development', role: 'Reader', services: ['llm'] };
      const tries: Array<[Record<string, unknown>, string]> = [
        [{ services: ['workflow'] }, 'scopes'],
        [{ type: 'production' }, 'type'],
        [{ dailyQuota: 51 }, 'dailyQuota'],
        [{ allowedIps: ['10.0.0.0/8'] }, 'allowedIps'],
        [{ models: ['builtin/hashed-ngrams'] }, 'models'],
        [{ dailyTokenBudget: 101 }, 'dailyTokenBudget'],
      ];
      for (const [extra, field] of tries) {
        const res = await p.request({
          method: 'POST',
          url: '/v1/api-keys',
          key: creator.key,
          payload: { ...base, ...extra },
          remoteAddress: '127.0.0.1',
        });
        const details = forbidden(res);
        if (field === 'scopes') expect(details.scopes).toBeDefined();
        else expect(details.exceeds).toEqual([field]);
      }
    });

    it('a customer token carries no scope its key lacks', async () => {
      const k = await key({ role: 'Reader', services: ['agent'] });
      const res = await post(
        '/v1/auth/tokens',
        { customerId: 'c1', scopes: ['agent:read', 'agent:write'] },
        k.key,
      );
      expect(forbidden(res).scopes).toEqual(['agent:write']);
    });
  });

  describe('workflows run through flows and agents', () => {
    it('a flow-only key cannot make a flow that runs an HMAC-protected workflow, so nothing runs', async () => {
      const flowOnly = await key({ role: 'Admin', services: ['flow'] });
      const before = { flows: await flowCount(), executions: await executionCount() };
      const res = await post(
        '/api/v1/chatflows',
        { name: 'bypass', kind: 'workflow', workflowId: hmacWorkflow },
        flowOnly.key,
      );
      expect(res.statusCode, res.body).toBe(403);
      expect(res.body).toContain('workflow:write');
      expect(await flowCount()).toBe(before.flows);
      expect(await executionCount()).toBe(before.executions);
    });

    it('nor turn an existing flow into one; a key that may run workflows directly may', async () => {
      const made = await post(
        '/api/v1/chatflows',
        { name: 'plain', kind: 'llm', model: 'builtin/extractive' },
        p.adminKey,
      );
      expect(made.statusCode, made.body).toBe(201);
      const flowOnly = await key({ role: 'Writer', services: ['flow'] });
      const put = await p.request({
        method: 'PUT',
        url: `/api/v1/chatflows/${made.json().id}`,
        key: flowOnly.key,
        payload: { kind: 'workflow', workflowId: hmacWorkflow },
      });
      expect(put.statusCode, put.body).toBe(403);
      const readerOfWorkflows = await key({ role: 'Reader', services: ['flow', 'workflow'] });
      const custom = await key({
        role: 'Custom',
        services: ['flow', 'workflow'],
        scopes: ['flow:write', 'flow:read', 'workflow:read'],
      });
      for (const k of [readerOfWorkflows, custom]) {
        const res = await post(
          '/api/v1/chatflows',
          { name: 'wf', kind: 'workflow', workflowId: hmacWorkflow },
          k.key,
        );
        expect(res.statusCode, res.body).toBe(403);
      }
      const runner = await key({ role: 'Writer', services: ['flow', 'workflow'] });
      const ok = await post(
        '/api/v1/chatflows',
        { name: 'wf', kind: 'workflow', workflowId: hmacWorkflow },
        runner.key,
      );
      expect(ok.statusCode, ok.body).toBe(201);
    });

    it('an agent cannot get a workflow tool its creator could not run; nor can a patch add one', async () => {
      const agentOnly = await key({ role: 'Admin', services: ['agent'] });
      const body = { name: 'helper', model: 'builtin/extractive', tools: [`workflow:${hmacWorkflow}`] };
      const res = await post('/api/agents', body, agentOnly.key);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().details).toMatchObject({ requiredScope: 'workflow:write' });

      const plain = await post('/api/agents', { name: 'plain', model: 'builtin/extractive' }, agentOnly.key);
      expect(plain.statusCode, plain.body).toBe(201);
      const patched = await p.request({
        method: 'PATCH',
        url: `/api/agents/${plain.json().id}`,
        key: agentOnly.key,
        payload: { tools: [`workflow:${hmacWorkflow}`] },
      });
      expect(patched.statusCode, patched.body).toBe(403);
      const stored = await p.request({ method: 'GET', url: `/api/agents/${plain.json().id}` });
      expect(stored.json().tools).toEqual([]);

      const runner = await key({ role: 'Writer', services: ['agent', 'workflow'] });
      const ok = await post('/api/agents', body, runner.key);
      expect(ok.statusCode, ok.body).toBe(201);
    });
  });
});
