import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { runAgentWithTool } from './support/ai-agent-run.js';
import { LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { createCredential, createWorkflow, n8nNode, otherAccountKey, workflowPlatform } from './support.js';

/**
 * n8n's Multiple Headers Auth and Custom Auth credentials: saved (sealed, checked), and applied by the
 * HTTP Request node and the HTTP Request tool to what a local server records.
 */

const openai = new FakeOpenAi();
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
let api: Server;
let apiBase = '';

beforeAll(async () => {
  await openai.start();
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await openai.stop();
  api.closeAllConnections();
  await new Promise<void>((resolve) => api.close(() => resolve()));
});
beforeEach(() => {
  openai.reset();
  seen.length = 0;
});

const MULTI = {
  values: [
    { name: 'X-Key', value: 'k-secret-1' },
    { name: 'X-Tenant', value: 't-7' },
  ],
};
const CUSTOM = {
  headers: { 'X-Sig': 's-secret-2' },
  qs: { sig: 'q-3' },
  body: { token: 'b-secret-4' },
};

describe.each(await testDialects())('HTTP auth credentials on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const create = (name: string, type: string, data: unknown, key?: string) =>
    p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name, type, data } as object,
      ...(key ? { key } : {}),
    });

  async function runHttp(credentials: Record<string, unknown>, genericAuthType: string, key?: string) {
    const id = await createWorkflow(
      p,
      {
        name: `http ${genericAuthType} ${Math.random()}`,
        nodes: [
          n8nNode('Start', 'manualTrigger', 1, {}),
          n8nNode(
            'HTTP',
            'httpRequest',
            4.2,
            {
              method: 'POST',
              url: `${apiBase}/r?a=1`,
              authentication: 'genericCredentialType',
              genericAuthType,
              sendBody: true,
              specifyBody: 'json',
              jsonBody: '{"x": 1}',
              options: {},
            },
            { credentials },
          ),
        ],
        connections: { Start: { main: [[{ node: 'HTTP', type: 'main', index: 0 }]] } },
        settings: {},
      },
      key,
    );
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: {},
      ...(key ? { key } : {}),
    });
    return res.json() as Execution;
  }

  it('stores both types sealed, given as n8n sends them (objects) or as JSON text', async () => {
    const multi = await create('multi', 'httpMultipleHeadersAuth', { headers: MULTI });
    expect(multi.statusCode).toBe(201);
    const custom = await create('custom', 'httpCustomAuth', { json: JSON.stringify(CUSTOM) });
    expect(custom.statusCode).toBe(201);
    const customObject = await create('custom obj', 'httpCustomAuth', { json: CUSTOM });
    expect(customObject.statusCode).toBe(201);
    for (const res of [multi, custom, customObject]) {
      expect(res.body).not.toMatch(/secret/);
      const row = await p.ctx.db
        .selectFrom('credentials')
        .select('data')
        .where('id', '=', (res.json() as { id: string }).id)
        .executeTakeFirstOrThrow();
      expect(row.data.startsWith('v1.')).toBe(true);
      expect(row.data).not.toMatch(/secret/);
    }
    const schema = await p.request({
      method: 'GET',
      url: '/api/v1/credentials/schema/httpMultipleHeadersAuth',
    });
    expect(schema.statusCode).toBe(200);
    expect(schema.json()).toMatchObject({ required: ['headers'] });
  });

  it.each([
    ['httpMultipleHeadersAuth', { headers: { values: [] } }, 'data.headers', /at least one header/],
    ['httpMultipleHeadersAuth', { headers: 'not json' }, 'data.headers', /must be JSON/],
    [
      'httpMultipleHeadersAuth',
      { headers: { values: [{ name: 'X-A', value: 'a\r\nX-Evil: 1' }] } },
      'data.headers',
      /line breaks/,
    ],
    [
      'httpMultipleHeadersAuth',
      { headers: { values: [{ name: 'bad name', value: 'v' }] } },
      'data.headers',
      /header name/,
    ],
    ['httpMultipleHeadersAuth', {}, 'data.headers', /required/],
    ['httpCustomAuth', { json: '{"headers": ' }, 'data.json', /Invalid Custom Auth JSON/],
    ['httpCustomAuth', { json: '[1]' }, 'data.json', /must be an object/],
    ['httpCustomAuth', { json: { header: { a: 'b' } } }, 'data.json', /only headers, qs and body/],
    ['httpCustomAuth', { json: { qs: 'x=1' } }, 'data.json', /qs must be an object/],
    ['httpCustomAuth', { json: { headers: { 'X-A': 'a\nb' } } }, 'data.json', /line breaks/],
    ['httpHeaderAuth', { name: { a: 1 }, value: 'v' }, 'data.name', /string, number or boolean/],
  ])('refuses bad %s data with a 400 naming the field (%#)', async (type, data, field, message) => {
    const res = await create(`bad ${Math.random()}`, type, data);
    expect(res.statusCode).toBe(400);
    const fields = (res.json() as { details?: { fields?: Array<{ field: string; message: string }> } })
      .details?.fields;
    expect(fields?.find((f) => f.field === field)?.message).toMatch(message);
  });

  it('HTTP Request node: every header of a Multiple Headers credential is sent', async () => {
    const cred = await createCredential(p, 'mh node', 'httpMultipleHeadersAuth', {
      headers: JSON.stringify(MULTI),
    });
    const e = await runHttp(
      { httpMultipleHeadersAuth: { id: cred, name: 'mh node' } },
      'httpMultipleHeadersAuth',
    );
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['x-key']).toBe('k-secret-1');
    expect(seen[0]?.headers['x-tenant']).toBe('t-7');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ x: 1 });
  });

  it('HTTP Request node: Custom Auth merges its headers, query and body into the request', async () => {
    const cred = await createCredential(p, 'ca node', 'httpCustomAuth', { json: JSON.stringify(CUSTOM) });
    const e = await runHttp({ httpCustomAuth: { id: cred, name: 'ca node' } }, 'httpCustomAuth');
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(seen[0]?.headers['x-sig']).toBe('s-secret-2');
    expect(seen[0]?.url).toBe('/r?a=1&sig=q-3');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ x: 1, token: 'b-secret-4' });
  });

  it("another account's credential is not applied: the run fails and nothing is sent", async () => {
    const cred = await createCredential(p, 'mine only', 'httpMultipleHeadersAuth', {
      headers: JSON.stringify(MULTI),
    });
    const other = await otherAccountKey(p);
    const e = await runHttp(
      { httpMultipleHeadersAuth: { id: cred, name: 'mine only' } },
      'httpMultipleHeadersAuth',
      other,
    );
    expect(e.data.resultData.error?.message).toMatch(/not found|credential/i);
    expect(seen).toHaveLength(0);
  });

  it('the test action answers that n8n has no test for these types', async () => {
    const cred = await createCredential(p, 'ca test', 'httpCustomAuth', { json: JSON.stringify(CUSTOM) });
    const res = await p.request({ method: 'POST', url: `/api/v1/credentials/${cred}/test` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'Error',
      message: "Credentials of type 'httpCustomAuth' have no test here",
    });
  });

  it('HTTP Request tool: a Multiple Headers credential applied to what the model calls', async () => {
    const openAiCred = await createCredential(p, `openai ${Math.random()}`, 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    const cred = await createCredential(p, 'mh tool', 'httpMultipleHeadersAuth', {
      headers: JSON.stringify(MULTI),
    });
    openai.queue(toolCalls([{ id: 'c1', name: 'lookup', arguments: '{}' }]), completion('Done.'));
    const { execution } = await runAgentWithTool(
      p,
      openAiCred,
      {
        name: 'lookup',
        type: `${LC}.toolHttpRequest`,
        typeVersion: 1.1,
        parameters: {
          toolDescription: 'Looks it up',
          url: `${apiBase}/tool`,
          authentication: 'genericCredentialType',
          genericAuthType: 'httpMultipleHeadersAuth',
        },
        credentials: { httpMultipleHeadersAuth: { id: cred, name: 'mh tool' } },
      } as never,
      { typeVersion: 2, text: 'look it up' },
    );
    expect(execution.data.resultData.error ?? null).toBeNull();
    expect(seen.map((s) => [s.url, s.headers['x-key'], s.headers['x-tenant']])).toEqual([
      ['/tool', 'k-secret-1', 't-7'],
    ]);
  });
});
