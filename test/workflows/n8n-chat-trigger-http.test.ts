import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { createCredential, createWorkflow, otherAccountKey, workflowPlatform } from './support.js';

/**
 * n8n's Chat Trigger over real HTTP: the chat webhook (`POST /webhook/{webhookId}/chat`, n8n's body), the
 * hosted chat page (GET, strict CSP), basic auth, `allowedOrigins` (CORS and its preflight), and one
 * workflow's chat running that workflow only.
 */

const [dialect = 'sqlite'] = await testDialects();
const openai = new FakeOpenAi();
beforeAll(() => openai.start());
afterAll(() => openai.stop());

const chatWorkflow = (
  webhookId: string,
  reply: string,
  trigger: Record<string, unknown> = {},
  extra = {},
) => ({
  name: `chat ${webhookId}`,
  nodes: [
    {
      id: 'chat',
      name: 'When chat message received',
      type: '@n8n/n8n-nodes-langchain.chatTrigger',
      typeVersion: 1.1,
      position: [0, 0],
      webhookId,
      parameters: { public: true, options: {}, ...trigger },
      ...extra,
    },
    {
      id: 'set',
      name: 'Answer',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [200, 0],
      parameters: {
        assignments: {
          assignments: [
            {
              id: 'a',
              name: 'output',
              value: `=${reply}: {{ $json.chatInput }} ({{ $json.sessionId }})`,
              type: 'string',
            },
          ],
        },
        options: {},
      },
    },
  ],
  connections: { 'When chat message received': { main: [[{ node: 'Answer', type: 'main', index: 0 }]] } },
  settings: {},
});

describe(`Chat Trigger over HTTP, platform on ${dialect}`, () => {
  let p: TestPlatform;
  let base = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await p.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    p.app.server.closeAllConnections();
    await p.close();
  });

  async function activeChat(body: unknown, key?: string) {
    const id = await createWorkflow(p, body, key);
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/activate`,
      ...(key ? { key } : {}),
    });
    expect(res.statusCode).toBe(200);
    return id;
  }
  const send = (webhookId: string, chatInput: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/webhook/${webhookId}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ action: 'sendMessage', sessionId: 'sess-1', chatInput }),
    });

  it("answers n8n's chat body with the last node's item, and serves the hosted page under a strict CSP", async () => {
    await activeChat(
      chatWorkflow('chat-hosted', 'Echo', {
        initialMessages: 'Hello <b>there</b>\nAsk me anything',
        options: {
          title: 'Help </title><script>alert(1)</script>',
          inputFieldPlaceholder: 'Type…',
          // n8n v1.1's name for it (templates carry it): it wins over the older one.
          inputPlaceholder: 'Ask <me>',
        },
      }),
    );
    const res = await send('chat-hosted', 'hi');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ output: 'Echo: hi (sess-1)' });

    const page = await fetch(`${base}/webhook/chat-hosted/chat`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const html = await page.text();
    // The author's texts are text: escaped in the page, inert JSON for the script.
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Help &lt;/title&gt;&lt;script&gt;');
    expect(html).toContain('placeholder="Ask &lt;me&gt;"');
    expect(html).toContain('"Hello \\u003cb>there\\u003c/b>","Ask me anything"');
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toEqual([' type="application/json" id="chat-config"', ` nonce="${nonce}"`]);
    expect(html).toContain("action:'sendMessage'");
  });

  it("applies the hosted chat's customCss after its own style, by the nonce and inert; none without it", async () => {
    await activeChat(
      chatWorkflow('chat-styled', 'S', {
        options: { customCss: ':root{--chat--color-primary:#0a0}</style><script>alert(1)</script>' },
      }),
    );
    const page = await fetch(`${base}/webhook/chat-styled/chat`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).not.toContain('unsafe-inline');
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    const html = await page.text();
    expect([...html.matchAll(/<style nonce="([^"]+)">/g)].map((m) => m[1])).toEqual([nonce, nonce]);
    expect(html).toContain(':root{--chat--color-primary:#0a0}\\3C /style>\\3C script>alert(1)\\3C /script>');
    expect(html).not.toContain('<script>alert(1)');
    // The page's own two scripts only.
    expect(html.match(/<script/g)).toHaveLength(2);

    await activeChat(chatWorkflow('chat-unstyled', 'U'));
    const plain = await (await fetch(`${base}/webhook/chat-unstyled/chat`)).text();
    expect(plain.match(/<style /g)).toHaveLength(1);
  });

  it('webhook mode: no page (405: the path takes POST only), the messages still answered', async () => {
    await activeChat(chatWorkflow('chat-webhook-mode', 'W', { mode: 'webhook' }));
    expect((await fetch(`${base}/webhook/chat-webhook-mode/chat`)).status).toBe(405);
    expect(await (await send('chat-webhook-mode', 'x')).json()).toEqual({ output: 'W: x (sess-1)' });
  });

  it('basic auth guards the page and the messages', async () => {
    const cred = await createCredential(p, 'chat basic', 'httpBasicAuth', { user: 'ada', password: 'pw' });
    await activeChat(
      chatWorkflow(
        'chat-basic',
        'B',
        { authentication: 'basicAuth' },
        {
          credentials: { httpBasicAuth: { id: cred, name: 'chat basic' } },
        },
      ),
    );
    const good = { authorization: `Basic ${Buffer.from('ada:pw').toString('base64')}` };
    const bad = { authorization: `Basic ${Buffer.from('ada:nope').toString('base64')}` };
    expect((await send('chat-basic', 'x')).status).toBe(401);
    expect((await send('chat-basic', 'x', bad)).status).toBe(403);
    expect(await (await send('chat-basic', 'x', good)).json()).toEqual({ output: 'B: x (sess-1)' });
    expect((await fetch(`${base}/webhook/chat-basic/chat`)).status).toBe(401);
    expect((await fetch(`${base}/webhook/chat-basic/chat`, { headers: good })).status).toBe(200);
  });

  it('allowedOrigins: a listed origin may read the answers (and its preflight passes), another may not', async () => {
    await activeChat(
      chatWorkflow('chat-cors', 'C', {
        options: { allowedOrigins: 'https://shop.example, https://b.example' },
      }),
    );
    const listed = await send('chat-cors', 'x', { origin: 'https://shop.example' });
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const other = await send('chat-cors', 'x', { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${base}/webhook/chat-cors/chat`, {
      method: 'OPTIONS',
      headers: { origin: 'https://b.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://b.example');
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const refused = await fetch(`${base}/webhook/chat-cors/chat`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // The default is n8n's `*`: any origin.
    await activeChat(chatWorkflow('chat-cors-any', 'D'));
    const any = await send('chat-cors-any', 'x', { origin: 'https://anywhere.example' });
    expect(any.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');
    // A plain webhook takes no preflight.
    expect((await fetch(`${base}/webhook/nothing-here/chat`, { method: 'OPTIONS' })).status).toBe(404);
  });

  it("another account's chat runs its own workflow only", async () => {
    const other = await otherAccountKey(p);
    await activeChat(chatWorkflow('chat-acct-a', 'A'));
    await activeChat(chatWorkflow('chat-acct-b', 'Other'), other);
    expect(await (await send('chat-acct-a', 'x')).json()).toEqual({ output: 'A: x (sess-1)' });
    expect(await (await send('chat-acct-b', 'y')).json()).toEqual({ output: 'Other: y (sess-1)' });
    const mine = await p.request({ method: 'GET', url: '/api/v1/executions?limit=100' });
    const theirs = await p.request({ method: 'GET', url: '/api/v1/executions?limit=100', key: other });
    const count = (res: { json(): unknown }) => (res.json() as { data: unknown[] }).data.length;
    expect(count(theirs)).toBe(1);
    expect(count(mine)).toBeGreaterThan(1);
  });

  it("n8n's user authentication is refused at save, naming the parameter", async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: chatWorkflow('chat-n8n-user', 'U', { authentication: 'n8nUserAuth' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/parameters\.authentication.*n8n user authentication is not available here/);
  });

  it("loadPreviousSession 'memory': the widget reads the session's messages from the attached memory", async () => {
    const cred = await createCredential(p, 'openai', 'openAiApi', { apiKey: 'sk', url: `${openai.base}/v1` });
    const LC = '@n8n/n8n-nodes-langchain';
    const trigger = 'When chat message received';
    await activeChat({
      name: 'chat memory',
      nodes: [
        {
          id: 'chat',
          name: trigger,
          type: `${LC}.chatTrigger`,
          typeVersion: 1.1,
          position: [0, 0],
          webhookId: 'chat-memory',
          parameters: { public: true, options: { loadPreviousSession: 'memory' } },
        },
        {
          id: 'agent',
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 2,
          position: [200, 0],
          parameters: { options: {} },
        },
        {
          id: 'model',
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          position: [200, 200],
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: cred, name: 'openai' } },
        },
        {
          id: 'memory',
          name: 'Simple Memory',
          type: `${LC}.memoryBufferWindow`,
          typeVersion: 1.3,
          position: [400, 200],
          parameters: {},
        },
      ],
      connections: {
        [trigger]: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
        Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
        'Simple Memory': {
          ai_memory: [
            [
              { node: 'AI Agent', type: 'ai_memory', index: 0 },
              { node: trigger, type: 'ai_memory', index: 0 },
            ],
          ],
        },
      },
      settings: {},
    });
    const load = (sessionId: string) =>
      fetch(`${base}/webhook/chat-memory/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'loadPreviousSession', sessionId }),
      });
    expect(await (await load('sess-1')).json()).toEqual({ data: [] });
    openai.reset();
    openai.queue(completion('Hello, Ann.'));
    const sent = await send('chat-memory', 'I am Ann');
    expect(await sent.json()).toEqual({ output: 'Hello, Ann.' });
    const loaded = await load('sess-1');
    expect(loaded.status).toBe(200);
    // LangChain's serialized messages, as n8n's widget reads them.
    expect(await loaded.json()).toEqual({
      data: [
        {
          lc: 1,
          type: 'constructor',
          id: ['langchain_core', 'messages', 'HumanMessage'],
          kwargs: { content: 'I am Ann', additional_kwargs: {}, response_metadata: {} },
        },
        {
          lc: 1,
          type: 'constructor',
          id: ['langchain_core', 'messages', 'AIMessage'],
          kwargs: {
            content: 'Hello, Ann.',
            additional_kwargs: {},
            response_metadata: {},
            tool_calls: [],
            invalid_tool_calls: [],
          },
        },
      ],
    });
    // Another session has none; asking ran no model.
    expect(await (await load('sess-2')).json()).toEqual({ data: [] });
    expect(openai.requests).toHaveLength(1);
  });

  it('loadPreviousSession refuses a memory whose session key is fixed: every visitor would read one chat', async () => {
    const LC = '@n8n/n8n-nodes-langchain';
    const trigger = 'When chat message received';
    await activeChat({
      name: 'chat shared memory',
      nodes: [
        {
          id: 'chat',
          name: trigger,
          type: `${LC}.chatTrigger`,
          typeVersion: 1.1,
          position: [0, 0],
          webhookId: 'chat-shared',
          parameters: { public: true, options: { loadPreviousSession: 'memory' } },
        },
        {
          id: 'memory',
          name: 'Simple Memory',
          type: `${LC}.memoryBufferWindow`,
          typeVersion: 1.3,
          position: [400, 200],
          parameters: { sessionIdType: 'customKey', sessionKey: 'everyone' },
        },
      ],
      connections: {
        'Simple Memory': { ai_memory: [[{ node: trigger, type: 'ai_memory', index: 0 }]] },
      },
      settings: {},
    });
    const res = await fetch(`${base}/webhook/chat-shared/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'loadPreviousSession', sessionId: 'anyone' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/fromInput/);
  });

  it("loadPreviousSession 'manually' is refused at save, naming the option", async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: chatWorkflow('chat-manual', 'M', { options: { loadPreviousSession: 'manually' } }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/options\.loadPreviousSession.*'manually' is not supported/);
  });
});
