/**
 * Secrets stay secret (issue 27, item 7): provider keys echoed in an upstream's error never reach
 * the caller or the log, model listings do not name providers' base URLs, and a credential is used
 * only by the workflows of its owner, of whom it is shared with, or of a key with credentials:use.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';
import { apiClient, baseEnv, cleanup, startServer, tempDir } from '../workflows/process/processes.js';
import { createCredential, createWorkflow, workflowPlatform } from '../workflows/support.js';

const PROVIDER_KEY = 'sk-live-0123456789abcdefSECRET';

describe('provider error text and model listings (a real server process, its log read)', () => {
  let upstream: FakeLlmServer;
  let server: Awaited<ReturnType<typeof startServer>>;
  let api: ReturnType<typeof apiClient>;
  const deadUrl = 'http://127.0.0.1:9/internal-llm';

  beforeAll(async () => {
    upstream = await startFakeOpenAi({ apiKey: PROVIDER_KEY });
    const key = generateKey('production');
    server = await startServer(['serve'], {
      ...baseEnv(tempDir()),
      PLATFORM_BOOTSTRAP_KEY: key,
      LOG_LEVEL: 'debug',
      PROVIDER_KEY_VAR: PROVIDER_KEY,
      LLM_MODELS: JSON.stringify([
        {
          name: 'leaky',
          provider: 'openai',
          baseUrl: upstream.url,
          upstreamModel: 'gpt-4o-mini',
          apiKeyEnv: 'PROVIDER_KEY_VAR',
          timeoutMs: 3000,
        },
        {
          name: 'dead',
          provider: 'openai',
          baseUrl: deadUrl,
          upstreamModel: 'gpt-4o-mini',
          apiKeyEnv: 'PROVIDER_KEY_VAR',
          timeoutMs: 3000,
        },
      ]),
    });
    api = apiClient(server.url, key);
  }, 60_000);
  afterAll(async () => {
    await cleanup();
    await upstream?.close();
  });

  const chat = (model: string) =>
    api('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });

  it('an upstream 401 echoing the key: the caller gets the status and a short cause, never the key', async () => {
    upstream.failNext(
      401,
      1,
      `Incorrect API key provided: ${PROVIDER_KEY}. Authorization: Bearer ${PROVIDER_KEY}`,
    );
    const res = await chat('leaky');
    expect(res.status).toBe(502);
    const text = JSON.stringify(res.json);
    expect(text).toContain('401');
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain('0123456789abcdef');
  });

  it('a refused request (400) echoing the key: still a 400 with the cause, without the key', async () => {
    upstream.failNext(400, 1, `context too long for key=${PROVIDER_KEY}`);
    const res = await api('POST', '/api/chat', {
      model: 'leaky',
      stream: false,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toMatch(/context too long/);
    expect(JSON.stringify(res.json)).not.toContain(PROVIDER_KEY);
  });

  it('an unreachable provider: the answer does not name its internal address', async () => {
    const res = await chat('dead');
    expect(res.status).toBe(502);
    const text = JSON.stringify(res.json);
    expect(text).toMatch(/unreachable/);
    expect(text).not.toMatch(/127\.0\.0\.1:9\b/);
  });

  it('/api/show, /api/tags, /api/ps, /v1/models and the OpenAPI document name no base URL or key', async () => {
    const answers = [
      await api('POST', '/api/show', { model: 'leaky' }),
      await api('POST', '/api/show', { model: 'dead' }),
      await api('GET', '/api/tags'),
      await api('GET', '/api/ps'),
      await api('GET', '/v1/models'),
      await api('GET', '/v1/models/leaky'),
      await api('GET', '/openapi.json'),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.json);
      expect(text).not.toContain(upstream.url);
      expect(text).not.toContain(new URL(upstream.url).host);
      expect(text).not.toMatch(/127\.0\.0\.1:9\b/);
      expect(text).not.toContain(PROVIDER_KEY);
    }
  });

  it('the server log never holds the key', async () => {
    // The calls above logged whatever they log by now; one more failure to be sure it is flushed.
    upstream.failNext(500, 1, `upstream exploded with ${PROVIDER_KEY}`);
    expect((await chat('leaky')).status).toBe(502);
    await server.waitFor(/"statusCode":502[\s\S]*"statusCode":502[\s\S]*"statusCode":502/);
    expect(server.output()).not.toContain(PROVIDER_KEY);
  });
});

/** A downstream that answers `/deny` with 401 echoing every header it got (as some APIs do), else 200. */
async function echoingDownstream() {
  const seen: Array<{ path: string; headers: IncomingMessage['headers'] }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    seen.push({ path, headers: req.headers });
    res.setHeader('content-type', 'application/json');
    res.statusCode = path === '/deny' ? 401 : 200;
    res.end(
      JSON.stringify({ error: path === '/deny' ? 'denied' : null, headers: req.headers, url: req.url }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    seen,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Manual trigger → n8n HTTP Request with an httpHeaderAuth credential. */
function credentialFlow(name: string, url: string, credential: { id: string; name: string }) {
  return {
    name,
    nodes: [
      {
        id: 't',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'h',
        name: 'Call',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        position: [200, 0],
        parameters: {
          url,
          authentication: 'genericCredentialType',
          genericAuthType: 'httpHeaderAuth',
          options: {},
        },
        credentials: { httpHeaderAuth: credential },
      },
    ],
    connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
  };
}

interface Execution {
  id: string;
  status: string;
  data: { resultData: { error?: { message: string; description?: string } } };
}

describe.each(await testDialects())('credentials are used only as shared, on %s', (dialect) => {
  let p: TestPlatform;
  let downstream: Awaited<ReturnType<typeof echoingDownstream>>;
  let writer: { key: string; id: string };
  let adminCred: { id: string; name: string };
  const ADMIN_SECRET = 'admin-only-secret-value-42';

  beforeAll(async () => {
    downstream = await echoingDownstream();
    p = await workflowPlatform(dialect, { MANUAL_RUN_WAIT_MS: '5000' });
    writer = await p.createKey({
      name: 'writer',
      type: 'production',
      role: 'Writer',
      services: ['workflow'],
    });
    adminCred = {
      id: await createCredential(p, 'admin-cred', 'httpHeaderAuth', {
        name: 'X-Api-Key',
        value: ADMIN_SECRET,
      }),
      name: 'admin-cred',
    };
  });
  afterAll(async () => {
    await p?.close();
    await downstream?.close();
  });

  const save = (body: unknown, key: string) =>
    p.request({ method: 'POST', url: '/api/v1/workflows', payload: body as object, key });
  const run = async (id: string, key?: string) =>
    p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {}, ...(key ? { key } : {}) });
  const share = (credId: string, ids: string[], key?: string) =>
    p.request({
      method: 'PUT',
      url: `/api/v1/credentials/${credId}/share`,
      payload: { shareWithIds: ids },
      ...(key ? { key } : {}),
    });

  it('a Writer key cannot save a workflow that sends another principal’s credential anywhere', async () => {
    const res = await save(credentialFlow('exfiltrate', `${downstream.url}/steal`, adminCred), writer.key);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/may not use credential.*share it/),
    });
    expect(JSON.stringify(res.json())).not.toContain(ADMIN_SECRET);
    // Nor swap it into a workflow saved by someone else (a replace is a save).
    const mine = await createWorkflow(p, credentialFlow('admin flow', `${downstream.url}/ok`, adminCred));
    const replaced = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${mine}`,
      payload: credentialFlow('admin flow', `${downstream.url}/steal`, adminCred),
      key: writer.key,
    });
    expect(replaced.statusCode, replaced.body).toBe(403);
    // Nor run the admin's workflow with input it chooses.
    const ran = await run(mine, writer.key);
    expect(ran.statusCode, ran.body).toBe(403);
    expect(downstream.seen.filter((s) => s.path === '/steal')).toHaveLength(0);
  });

  it('nor change, share, transfer or delete it', async () => {
    const patch = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${adminCred.id}`,
      payload: { name: 'mine-now' },
      key: writer.key,
    });
    expect(patch.statusCode).toBe(403);
    expect((await share(adminCred.id, [`key:${writer.id}`], writer.key)).statusCode).toBe(403);
    const transfer = await p.request({
      method: 'PUT',
      url: `/api/v1/credentials/${adminCred.id}/transfer`,
      payload: { destinationProjectId: `key:${writer.id}` },
      key: writer.key,
    });
    expect(transfer.statusCode).toBe(403);
    const del = await p.request({
      method: 'DELETE',
      url: `/api/v1/credentials/${adminCred.id}`,
      key: writer.key,
    });
    expect(del.statusCode).toBe(403);
  });

  it('its own credential works for it; shared, the other one does too; withdrawn, the run fails clearly', async () => {
    const created = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: {
        name: 'writer-cred',
        type: 'httpHeaderAuth',
        data: { name: 'X-Own', value: 'writer-own-secret' },
      },
      key: writer.key,
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ owner: `key:${writer.id}` });
    const own = await save(
      credentialFlow('own', `${downstream.url}/ok`, { id: created.json().id, name: 'writer-cred' }),
      writer.key,
    );
    expect(own.statusCode, own.body).toBe(201);
    const ownRun = (await run(own.json().id, writer.key)).json() as Execution;
    expect(ownRun.status).toBe('success');

    const shared = await share(adminCred.id, [`key:${writer.id}`]);
    expect(shared.statusCode, shared.body).toBe(200);
    expect(shared.json()).toEqual({
      id: adminCred.id,
      owner: expect.any(String),
      sharedWith: [`key:${writer.id}`],
    });
    const saved = await save(credentialFlow('shared', `${downstream.url}/ok`, adminCred), writer.key);
    expect(saved.statusCode, saved.body).toBe(201);
    const before = downstream.seen.length;
    expect(((await run(saved.json().id, writer.key)).json() as Execution).status).toBe('success');
    expect(downstream.seen.at(-1)?.headers['x-api-key']).toBe(ADMIN_SECRET);

    expect((await share(adminCred.id, [])).statusCode).toBe(200);
    // Run by the owner (any trigger): the workflow acts as the Writer key that saved it.
    const refused = (await run(saved.json().id)).json() as Execution;
    expect(refused.status).toBe('error');
    expect(JSON.stringify(refused.data.resultData.error)).toMatch(/may not be used by this workflow/);
    expect(downstream.seen.length).toBe(before + 1);
    const activate = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${saved.json().id}/activate`,
    });
    expect(activate.statusCode).toBe(400);
    expect(activate.body).toMatch(/not shared with key:/);
  });

  it('a key with credentials:use uses any credential of the account; a key without it cannot grant it', async () => {
    const user = await p.createKey({
      name: 'writer with credentials:use',
      type: 'production',
      role: 'Writer',
      services: ['workflow'],
      scopes: ['credentials:use'],
    });
    const res = await save(credentialFlow('scoped', `${downstream.url}/ok`, adminCred), user.key);
    expect(res.statusCode, res.body).toBe(201);
    expect(((await run(res.json().id, user.key)).json() as Execution).status).toBe('success');
    const escalate = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: {
        name: 'x',
        type: 'production',
        role: 'Writer',
        services: ['workflow'],
        scopes: ['credentials:use'],
      },
      key: writer.key,
    });
    expect(escalate.statusCode).toBe(403);
  });

  it('a credential and a workflow stored before owners existed belong to the account and keep working', async () => {
    const db = p.ctx.db;
    const sealed = p.ctx.secrets
      .box('workflow-credentials')
      .encrypt(JSON.stringify({ name: 'X-Old', value: 'legacy-secret' }));
    // Inserted without an owner, as rows stand after the migration's default.
    await sql`insert into credentials (id, account_id, name, type, data, created_at, updated_at)
      values ('cred_legacy', ${p.accountId}, 'legacy', 'httpHeaderAuth', ${sealed}, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(
      db,
    );
    const listed = await p.request({ method: 'GET', url: '/api/v1/credentials/cred_legacy' });
    expect(listed.json()).toMatchObject({ owner: 'account' });
    const legacyFlow = credentialFlow('legacy', `${downstream.url}/ok`, {
      id: 'cred_legacy',
      name: 'legacy',
    });
    const id = await createWorkflow(p, legacyFlow);
    await sql`update workflows set saved_by = 'account' where id = ${id}`.execute(db);
    expect(((await run(id)).json() as Execution).status).toBe('success');
    expect(downstream.seen.at(-1)?.headers['x-old']).toBe('legacy-secret');
    expect((await save(legacyFlow, writer.key)).statusCode).toBe(403);
  });

  it('a Writer key’s workflow cannot call another’s workflow that holds a credential, with input it chooses', async () => {
    // The admin's sub-workflow sends its credential to the URL its caller passes.
    const callee = await createWorkflow(p, {
      name: 'callee with a credential',
      nodes: [
        {
          id: 'c',
          name: 'Called',
          type: 'n8n-nodes-base.executeWorkflowTrigger',
          typeVersion: 1.1,
          position: [0, 0],
          parameters: { inputSource: 'passthrough' },
        },
        { ...credentialFlow('x', '={{ $json.url }}', adminCred).nodes[1] },
      ],
      connections: { Called: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
    });
    const caller = await save(
      {
        name: 'caller',
        nodes: [
          credentialFlow('x', 'http://unused', adminCred).nodes[0],
          {
            id: 's',
            name: 'Set',
            type: 'n8n-nodes-base.set',
            typeVersion: 3.4,
            position: [200, 0],
            parameters: {
              assignments: {
                assignments: [{ id: 'u', name: 'url', value: `${downstream.url}/steal-sub`, type: 'string' }],
              },
              options: {},
            },
          },
          {
            id: 'e',
            name: 'Run callee',
            type: 'n8n-nodes-base.executeWorkflow',
            typeVersion: 1.2,
            position: [400, 0],
            parameters: { workflowId: { __rl: true, value: callee, mode: 'id' }, options: {} },
          },
        ],
        connections: {
          Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
          Set: { main: [[{ node: 'Run callee', type: 'main', index: 0 }]] },
        },
      },
      writer.key,
    );
    expect(caller.statusCode, caller.body).toBe(201);
    const execution = (await run(caller.json().id, writer.key)).json() as Execution;
    expect(execution.status).toBe('error');
    expect(JSON.stringify(execution.data.resultData.error)).toMatch(/may not use credential/);
    expect(downstream.seen.filter((s) => s.path === '/steal-sub')).toHaveLength(0);
  });

  it('a server echoing the injected credential in its error: the execution’s error does not hold it', async () => {
    const id = await createWorkflow(p, credentialFlow('echo', `${downstream.url}/deny`, adminCred));
    const execution = (await run(id)).json() as Execution;
    expect(execution.status).toBe('error');
    const error = JSON.stringify(execution.data.resultData.error);
    expect(error).toMatch(/401/);
    expect(error).not.toContain(ADMIN_SECRET);
    const stored = await p.request({
      method: 'GET',
      url: `/api/v1/executions/${execution.id}?includeData=true`,
    });
    expect(stored.statusCode).toBe(200);
    expect(stored.body).not.toContain(ADMIN_SECRET);
  });
});
