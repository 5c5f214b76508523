import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { runNode } from './db-support.js';
import { runAgentWithTool } from './support/ai-agent-run.js';
import { LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { PREDEFINED_CASES } from './support/predefined-cases.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * n8n's predefined credential types through the API: saved under n8n's type and field names, described
 * by the schema endpoint, applied by the HTTP Request node (v2 and v4) and tool to what a local server
 * records, and kept out of the execution when the server echoes them.
 */

const openai = new FakeOpenAi();
const seen: Array<{ url: string; headers: Record<string, unknown> }> = [];
let api: Server;
let apiBase = '';

beforeAll(async () => {
  await openai.start();
  api = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: { ...req.headers } });
      // `/deny` answers 401 echoing what the credential sent, as some services do in their errors.
      const status = req.url?.startsWith('/deny') ? 401 : 200;
      // The credentials without their scheme: no "Basic …" shape tells a redaction they are secrets.
      const got = req.headers.authorization?.split(' ').slice(1).join(' ') ?? null;
      const echo = { url: req.url, got, apikey: req.headers.apikey ?? null };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
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

const caseOf = (id: string) => {
  const found = PREDEFINED_CASES.find((c) => c.id === id);
  if (!found) throw new Error(`no case ${id}`);
  return found;
};

describe.each(await testDialects())('predefined credential types on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const httpNode = (version: number, type: string, credential: string, path: string) => ({
    type: 'httpRequest',
    typeVersion: version,
    parameters: {
      url: `${apiBase}${path}`,
      authentication: 'predefinedCredentialType',
      nodeCredentialType: type,
      options: {},
    },
    credentials: { [type]: { id: credential, name: type } },
  });

  it.each(PREDEFINED_CASES.map((c) => [c.id, c] as const))(
    'saves a %s credential by n8n’s field names, and the schema endpoint describes them',
    async (_id, c) => {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { name: `cred ${Math.random()}`, type: c.type, data: c.data },
      });
      expect(res.statusCode, res.body).toBe(201);
      for (const value of Object.values(c.data)) if (value.length > 5) expect(res.body).not.toContain(value);
      const schema = await p.request({ method: 'GET', url: `/api/v1/credentials/schema/${c.type}` });
      expect(schema.statusCode).toBe(200);
      const { properties, required } = schema.json() as {
        properties: Record<string, unknown>;
        required: string[];
      };
      expect(Object.keys(properties)).toEqual(expect.arrayContaining(Object.keys(c.data)));
      expect(Object.keys(c.data)).toEqual(expect.arrayContaining(required));
    },
  );

  it('refuses a credential without its secret, or with a field n8n’s type does not have (400 naming it)', async () => {
    const missing = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name: 'no key', type: 'stripeApi', data: { signatureSecret: 'whsec_1' } },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('data.secretKey');
    expect(missing.body).not.toContain('whsec_1');
    const unknown = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name: 'old shape', type: 'cloudflareApi', data: { apiToken: 't', authenticationKey: 'k' } },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('data.authenticationKey');
  });

  it.each([2, 4.2])('HTTP Request v%s sends the header a saved credential makes', async (version) => {
    const c = caseOf('discordBotApi');
    const cred = await createCredential(p, `discord ${version}`, c.type, c.data);
    const { error } = await runNode(p, httpNode(version, c.type, cred, '/ok'));
    expect(error).toBeUndefined();
    expect(seen.map((s) => [s.url, s.headers.authorization])).toEqual([['/ok', 'Bot discord-bot-1']]);
  });

  it.each(['zendeskApi', 'pipedriveApi', 'supabaseApi', 'wooCommerceApi:inQuery'])(
    'a server echoing the %s credential in its error leaves no secret in the execution',
    async (id) => {
      const c = caseOf(id);
      const cred = await createCredential(p, `echo ${id}`, c.type, c.data);
      const { error, execution } = await runNode(p, httpNode(4.2, c.type, cred, '/deny'));
      expect(error).toMatch(/Authorization failed/);
      expect(seen).toHaveLength(1);
      const sent = String(seen[0]?.headers.authorization ?? '');
      const stored = JSON.stringify(execution);
      const secrets = Object.values(c.data).filter((v) => v.length > 5 && !v.startsWith('http'));
      for (const secret of [...secrets, sent.slice(sent.indexOf(' ') + 1)].filter(Boolean))
        expect(stored).not.toContain(secret);
    },
  );

  it('HTTP Request tool: a predefined credential applied, and its echo kept from the model', async () => {
    const openAiCred = await createCredential(p, `openai ${Math.random()}`, 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    const c = caseOf('huggingFaceApi');
    const cred = await createCredential(p, 'hf tool', c.type, c.data);
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
          url: `${apiBase}/deny`,
          authentication: 'predefinedCredentialType',
          nodeCredentialType: c.type,
        },
        credentials: { [c.type]: { id: cred, name: 'hf tool' } },
      } as never,
      { typeVersion: 2, text: 'look it up' },
    );
    expect(execution.data.resultData.error ?? null).toBeNull();
    expect(seen.map((s) => [s.url, s.headers.authorization])).toEqual([['/deny', 'Bearer hf_hug1']]);
    // The tool's answer (the server's 401 and its echo) went back to the model, without the key.
    const toModel = JSON.stringify(openai.requests[1]);
    expect(toModel).toContain('401');
    expect(toModel).not.toContain('hf_hug1');
    expect(JSON.stringify(execution)).not.toContain('hf_hug1');
  });

  it('HTTP Request tool: a type not served is a clear error naming it', async () => {
    const openAiCred = await createCredential(p, `openai ${Math.random()}`, 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    openai.queue(completion('Done.'));
    const { execution } = await runAgentWithTool(
      p,
      openAiCred,
      {
        name: 'lookup',
        type: `${LC}.toolHttpRequest`,
        typeVersion: 1.1,
        parameters: {
          toolDescription: 'Looks it up',
          url: `${apiBase}/ok`,
          authentication: 'predefinedCredentialType',
          nodeCredentialType: 'googleApi',
        },
        credentials: { googleApi: { id: 'x', name: 'google' } },
      } as never,
      { typeVersion: 2, text: 'look it up' },
    );
    expect(execution.data.resultData.error?.message).toMatch(/'googleApi' is not available here/);
    expect(seen).toHaveLength(0);
  });
});
