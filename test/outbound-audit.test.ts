import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from './helpers/platform.js';
import { until } from './helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from './llm/support.js';
import {
  passiveRedirectFtp,
  type Recorder,
  recordingHttp,
  recordingTcp,
} from './support/outbound-audit-listeners.js';
import type { Execution } from './workflows/db-support.js';

/**
 * Server-side request forgery audit: every place a tenant (an account's API key) can make the server
 * open a connection to a place of its choosing, aimed at loopback listeners that record every
 * connection. Each probe asserts the SAFE behaviour: a refusal in the route's error shape (or a failed
 * run naming the host), and no connection at the listener. Loopback is spelled every way a parser
 * might let through; a host the operator allowed (OUTBOUND_ALLOW_HOSTS names `localhost:<port>`)
 * redirects to loopback ports it did not name. 169.254.169.254 is only checked for the refusal.
 *
 * One platform (all modules, SQLite, fake model servers from test/llm/support.ts) for every probe.
 */

const CANARY = `outbound-audit-${randomBytes(6).toString('hex')}`;
/** The outbound guard's refusals (outbound.ts): a private address, or a name that does not resolve. */
const REFUSED = /is not allowed|may not reach private or internal addresses|does not resolve/;
/** For a redirect from the allowed host: the guard's refusal at the hop, or the 302 not followed at all. */
const REFUSED_OR_NOT_FOLLOWED =
  /is not allowed|may not reach private or internal addresses|HTTP 302|answered 302|not followed/;
const METADATA = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
const LC = '@n8n/n8n-nodes-langchain';

type Json = Record<string, unknown>;
interface Answer {
  /** The route's HTTP status. */
  status: number;
  /** What the caller was told (the error's message and details, or the failed run's error). */
  said: string;
}

describe('outbound audit: tenant-aimed connections never reach loopback, private or metadata addresses', () => {
  let bed: LlmTestbed;
  let p: TestPlatform;
  /** Named in OUTBOUND_ALLOW_HOSTS (`localhost:<port>`): answers JSON, or redirects to `?to=`. */
  let allowed: Recorder;
  /** An internal HTTP service nobody named: must never see a connection. */
  let internal: Recorder;
  /** An internal raw TCP service nobody named (databases, mail, FTP, SSH probes). */
  let tcp: Recorder;
  /** An internal service whose URL the operator only exposes to expressions (EXPRESSION_ENV_ALLOWLIST). */
  let envExposed: Recorder;
  /** An FTP server the operator allowed by host:port, whose passive mode points at `tcp`. */
  let ftp: { port: number; close(): Promise<void> };

  beforeAll(async () => {
    internal = await recordingHttp(CANARY);
    tcp = await recordingTcp();
    envExposed = await recordingHttp(CANARY);
    allowed = await recordingHttp(CANARY, (req, res) => {
      const url = new URL(req.url ?? '/', 'http://allowed');
      if (url.pathname === '/redirect') {
        res.statusCode = 302;
        res.setHeader('location', url.searchParams.get('to') ?? '/');
        return res.end();
      }
      // An OpenAI-compatible answer, for the AI Agent probes (their model is this host).
      if (url.pathname.endsWith('/chat/completions')) {
        res.setHeader('content-type', 'application/json');
        return res.end(
          JSON.stringify({
            id: 'chatcmpl-audit',
            object: 'chat.completion',
            created: 0,
            model: 'gpt-4o-mini',
            choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
    ftp = await passiveRedirectFtp(tcp.port);
    bed = await startLlmTestbed(
      'sqlite',
      {
        OUTBOUND_ALLOW_HOSTS: `localhost:${allowed.port},127.0.0.1:${ftp.port}`,
        OUTBOUND_TIMEOUT_MS: '5000',
        MCP_CLIENT_TIMEOUT_MS: '3000',
        MANUAL_RUN_WAIT_MS: '30000',
        WORKFLOW_SSH_ENABLED: 'true',
        // An operator exposing a cache URL to expressions ($env.AUDIT_CACHE_URL); not a downstream.
        EXPRESSION_ENV_ALLOWLIST: 'AUDIT_CACHE_URL',
        AUDIT_CACHE_URL: `redis://127.0.0.1:${envExposed.port}`,
      },
      {
        extraModels: (_ollama, openai) => [
          { provider: 'openai', baseUrl: openai.url, name: 'gpt-3.5-turbo', upstreamModel: 'gpt-4o-mini' },
        ],
      },
    );
    p = bed.p;
  }, 120_000);

  afterAll(async () => {
    await bed?.close();
    await Promise.all([allowed, internal, tcp, envExposed, ftp].map((s) => s?.close()));
  });

  // ------------------------------------------------------------------ spellings

  /** Loopback spelled every way, at `port`: [label, URL]. */
  const loopbackUrls = (port: number, path = '/probe'): Array<[string, string]> => [
    ['127.0.0.1', `http://127.0.0.1:${port}${path}`],
    ['localhost', `http://localhost:${port}${path}`],
    ['[::1]', `http://[::1]:${port}${path}`],
    ['[::ffff:127.0.0.1]', `http://[::ffff:127.0.0.1]:${port}${path}`],
    ['0.0.0.0', `http://0.0.0.0:${port}${path}`],
    ['2130706433', `http://2130706433:${port}${path}`],
    ['0x7f000001', `http://0x7f000001:${port}${path}`],
    ['127.1', `http://127.1:${port}${path}`],
    ['localhost.', `http://localhost.:${port}${path}`],
    ['LOCALHOST', `http://LOCALHOST:${port}${path}`],
    ['allowed-userinfo@127.0.0.1', `http://localhost:${allowed.port}@127.0.0.1:${port}${path}`],
    ['allowed-userinfo@localhost', `http://localhost:${allowed.port}@localhost:${port}${path}`],
  ];

  /** The allowed host answering 302 to loopback ports nobody named: [label, URL of the allowed host]. */
  const redirects = (port: number): Array<[string, string]> =>
    [
      ['redirect → 127.0.0.1', `http://127.0.0.1:${port}/via-redirect`],
      // The allowed name itself, another port: the allow entry is host:port.
      ['redirect → localhost (other port)', `http://localhost:${port}/via-redirect`],
      ['redirect → [::1]', `http://[::1]:${port}/via-redirect`],
      ['redirect → 2130706433', `http://2130706433:${port}/via-redirect`],
    ].map(([label, to]) => [
      label as string,
      `http://localhost:${allowed.port}/redirect?to=${encodeURIComponent(to as string)}`,
    ]);

  /** A credential's host field spelled every way (TCP clients take a host and a port). */
  const loopbackHosts = [
    '127.0.0.1',
    'localhost',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '0.0.0.0',
    '2130706433',
    '0x7f000001',
    '127.1',
    'localhost.',
    'LOCALHOST',
    ' 127.0.0.1 ',
  ];

  /** Connections plus request lines a recorder saw (a kept-alive connection still shows its requests). */
  const reached = (recorder: Recorder) => recorder.connections() + recorder.requests.length;

  /**
   * Runs `attempt` for each [label, target], asserting a refusal the caller can read and no new
   * connection at `recorder`; soft, so every spelling that gets through is reported.
   */
  async function expectRefused(
    path: string,
    targets: Array<[string, string]>,
    recorder: Recorder,
    attempt: (target: string) => Promise<Answer>,
    check: (answer: Answer) => void = () => undefined,
  ) {
    for (const [label, target] of targets) {
      const before = reached(recorder);
      const answer = await attempt(target);
      const refusal = label.startsWith('redirect') ? REFUSED_OR_NOT_FOLLOWED : REFUSED;
      expect.soft(answer.said, `${path} [${label}] should be refused: ${answer.said}`).toMatch(refusal);
      expect.soft(answer.said, `${path} [${label}] leaked the listener's answer`).not.toContain(CANARY);
      expect.soft(reached(recorder) - before, `${path} [${label}] reached the listener`).toBe(0);
      check(answer);
    }
  }

  // ------------------------------------------------------------------ callers

  const request = (method: string, url: string, payload?: unknown) =>
    p.request({
      method: method as 'POST',
      url,
      ...(payload !== undefined ? { payload: payload as Json } : {}),
    });

  async function createCredential(type: string, data: Record<string, string>): Promise<string> {
    const res = await request('POST', '/api/v1/credentials', {
      name: `audit ${type} ${randomBytes(4).toString('hex')}`,
      type,
      data,
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { id: string }).id;
  }

  /** n8n's credential test (`POST /api/v1/credentials/{id}/test`): 200 `{status, message}`. */
  async function credentialTest(type: string, data: Record<string, string>): Promise<Answer> {
    const id = await createCredential(type, data);
    const res = await request('POST', `/api/v1/credentials/${id}/test`, {});
    const body = res.json() as { status?: string; message?: string };
    expect.soft(res.statusCode, res.body).toBe(200);
    expect.soft(body.status, `${type} test of ${JSON.stringify(data)}: ${res.body}`).toBe('Error');
    return { status: res.statusCode, said: body.message ?? res.body };
  }

  /** Saves `nodes` after a Manual Trigger (chained, or by `connections`) and runs them manually. */
  async function runWorkflow(
    nodes: Json[],
    connections?: Json,
  ): Promise<{ execution: Execution; said: string }> {
    const all: Json[] = [
      {
        id: 'Start',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      ...nodes.map((n, i) => ({ id: n.name, position: [(i + 1) * 200, 0], parameters: {}, ...n })),
    ];
    const chained: Json = {};
    for (let i = 1; i < all.length; i++)
      chained[all[i - 1]?.name as string] = {
        main: [[{ node: all[i]?.name as string, type: 'main', index: 0 }]],
      };
    const created = await request('POST', '/api/v1/workflows', {
      name: `audit ${randomBytes(4).toString('hex')}`,
      nodes: all,
      connections: connections ?? chained,
      settings: {},
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    const res = await request('POST', `/api/v1/workflows/${id}/run`, {});
    expect(res.statusCode, res.body).toBe(200);
    const execution = res.json() as Execution;
    const error = execution.data.resultData.error;
    const nodeErrors = Object.values(execution.data.resultData.runData)
      .flatMap((runs) => runs.map((r) => r.error?.message ?? ''))
      .filter(Boolean);
    const said = [error?.message, error?.description, ...nodeErrors].filter(Boolean).join(' | ');
    expect
      .soft(
        execution.status,
        `run of ${JSON.stringify(nodes[0]?.type)} should fail: ${JSON.stringify(execution)}`,
      )
      .toBe('error');
    return { execution, said: said || JSON.stringify(execution.data.resultData) };
  }

  const node = (type: string, typeVersion: number, parameters: Json, credentials?: Json): Json => ({
    name: 'Probe',
    type,
    typeVersion,
    parameters,
    ...(credentials ? { credentials } : {}),
  });

  const apiError = (status: number, body: string): Answer => {
    let parsed: Json = {};
    try {
      parsed = JSON.parse(body) as Json;
    } catch {
      parsed = {};
    }
    return { status, said: `${String(parsed.message ?? body)} ${JSON.stringify(parsed.details ?? {})}` };
  };

  // ------------------------------------------------------------------ HTTP: workflows

  it('HTTP Request node (v4.2): loopback in every spelling, redirects from an allowed host, metadata', async () => {
    const run = async (url: string): Promise<Answer> => {
      const { said } = await runWorkflow([node('n8n-nodes-base.httpRequest', 4.2, { url, options: {} })]);
      return { status: 200, said };
    };
    await expectRefused('httpRequest v4.2', loopbackUrls(internal.port), internal, run);
    await expectRefused('httpRequest v4.2', redirects(internal.port), internal, run);
    await expectRefused('httpRequest v4.2', [['metadata', METADATA]], internal, run);
    // The allowed host itself is reached (the listeners are live: a missing guard would connect).
    const before = allowed.requests.length;
    const ok = await runWorkflow([
      node('n8n-nodes-base.httpRequest', 4.2, { url: `http://localhost:${allowed.port}/ok`, options: {} }),
      {
        ...node('n8n-nodes-base.stopAndError', 1, { errorMessage: 'reached the allowed host' }),
        name: 'Stop',
      },
    ]);
    expect(ok.said).toContain('reached the allowed host');
    expect(allowed.requests.slice(before)).toEqual(['GET /ok']);
  });

  it('HTTP Request node v1 (legacy) and the platform HTTP Request node go through the same guard', async () => {
    const targets = [...loopbackUrls(internal.port).slice(0, 6), ...redirects(internal.port).slice(0, 2)];
    await expectRefused('httpRequest v1', targets, internal, async (url) => ({
      status: 200,
      said: (await runWorkflow([node('n8n-nodes-base.httpRequest', 1, { url, options: {} })])).said,
    }));
    await expectRefused('n8n-nodes-platform.httpRequest', targets, internal, async (url) => ({
      status: 200,
      said: (await runWorkflow([node('n8n-nodes-platform.httpRequest', 1, { url })])).said,
    }));
  });

  it('GraphQL, RSS Read, n8n API, Telegram nodes: their endpoint / feed / base URL is refused', async () => {
    const targets = [
      ...loopbackUrls(internal.port).filter(([l]) =>
        ['127.0.0.1', '[::1]', '2130706433', 'allowed-userinfo@127.0.0.1'].includes(l),
      ),
      ...redirects(internal.port).slice(0, 1),
    ];
    await expectRefused('graphql', targets, internal, async (endpoint) => ({
      status: 200,
      said: (
        await runWorkflow([
          node('n8n-nodes-base.graphql', 1.1, { endpoint, query: '{ me }', requestFormat: 'json' }),
        ])
      ).said,
    }));
    await expectRefused('rssFeedRead', targets, internal, async (url) => ({
      status: 200,
      said: (await runWorkflow([node('n8n-nodes-base.rssFeedRead', 1.2, { url, options: {} })])).said,
    }));
    await expectRefused('n8n API node (n8nApi baseUrl)', targets, internal, async (url) => {
      const cred = await createCredential('n8nApi', {
        apiKey: 'k',
        baseUrl: url.replace('/probe', '/api/v1'),
      });
      const { said } = await runWorkflow([
        node(
          'n8n-nodes-base.n8n',
          1,
          { resource: 'workflow', operation: 'getAll', returnAll: false, limit: 1 },
          { n8nApi: { id: cred, name: 'n8n' } },
        ),
      ]);
      return { status: 200, said };
    });
    await expectRefused('telegram (telegramApi baseUrl)', targets, internal, async (url) => {
      const cred = await createCredential('telegramApi', {
        accessToken: '1:abc',
        baseUrl: url.replace('/probe', ''),
      });
      const { said } = await runWorkflow([
        node(
          'n8n-nodes-base.telegram',
          1.2,
          { resource: 'message', operation: 'sendMessage', chatId: '1', text: 'x', additionalFields: {} },
          { telegramApi: { id: cred, name: 'bot' } },
        ),
      ]);
      return { status: 200, said };
    });
  });

  it('OAuth2 client credentials: the token URL is refused (the API it signs for is allowed)', async () => {
    const targets = [
      ...loopbackUrls(internal.port, '/token').filter(([l]) =>
        ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '0x7f000001'].includes(l),
      ),
      ...redirects(internal.port).slice(0, 2),
    ];
    await expectRefused('oAuth2Api accessTokenUrl', targets, internal, async (accessTokenUrl) => {
      const cred = await createCredential('oAuth2Api', {
        grantType: 'clientCredentials',
        accessTokenUrl,
        clientId: 'client',
        clientSecret: 'secret',
        authentication: 'body',
        scope: 'api',
      });
      const { said } = await runWorkflow([
        node(
          'n8n-nodes-base.httpRequest',
          4.2,
          {
            method: 'GET',
            url: `http://localhost:${allowed.port}/api/me`,
            authentication: 'genericCredentialType',
            genericAuthType: 'oAuth2Api',
            options: {},
          },
          { oAuth2Api: { id: cred, name: 'oauth' } },
        ),
      ]);
      return { status: 200, said };
    });
  });

  it('credential test over HTTP (qdrantApi URL): refused in every spelling and on redirect', async () => {
    const targets = [
      ...loopbackUrls(internal.port, ''),
      ...redirects(internal.port),
      ['metadata', 'http://169.254.169.254'] as [string, string],
    ];
    await expectRefused('credential test qdrantApi', targets, internal, (qdrantUrl) =>
      credentialTest('qdrantApi', { qdrantUrl, apiKey: 'k' }),
    );
  });

  it("an operator's $env value that happens to be a URL does not open its host to tenants' HTTP", async () => {
    // AUDIT_CACHE_URL is exposed to expressions only; OUTBOUND_ALLOW_HOSTS does not name its host. The
    // workflows' HTTP client trusts the host of every $env value that parses as a URL
    // (src/modules/workflows/index.ts, downstreamEnv + trustedHosts), not only the downstream URLs.
    await expectRefused(
      'httpRequest to the host of an EXPRESSION_ENV value',
      [['127.0.0.1 (named only by $env.AUDIT_CACHE_URL)', `http://127.0.0.1:${envExposed.port}/`]],
      envExposed,
      async (url) => ({
        status: 200,
        said: (await runWorkflow([node('n8n-nodes-base.httpRequest', 4.2, { url, options: {} })])).said,
      }),
    );
  });

  // ------------------------------------------------------------------ HTTP: MCP client tool (workflow)

  it('MCP Client Tool (SSE and Streamable HTTP transports) refuses loopback endpoints', async () => {
    const openAi = await createCredential('openAiApi', {
      apiKey: 'sk-audit',
      url: `http://localhost:${allowed.port}/v1`,
    });
    const agentRun = async (tool: Json): Promise<Answer> => {
      const nodes = [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 1.7,
          parameters: { promptType: 'define', text: 'list the tools', options: {} },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: openAi, name: 'openai' } },
        },
        { name: 'MCP', type: `${LC}.mcpClientTool`, ...tool },
      ];
      const { said } = await runWorkflow(nodes, {
        Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
        Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
        MCP: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
      });
      return { status: 200, said };
    };
    const targets = [
      ...loopbackUrls(internal.port, '/sse').filter(([l]) =>
        ['127.0.0.1', 'localhost', '[::1]', '2130706433', 'allowed-userinfo@127.0.0.1'].includes(l),
      ),
      ...redirects(internal.port).slice(0, 1),
    ];
    await expectRefused('mcpClientTool v1 (SSE)', targets, internal, (sseEndpoint) =>
      agentRun({ typeVersion: 1, parameters: { sseEndpoint, include: 'all', options: { timeout: 3000 } } }),
    );
    await expectRefused('mcpClientTool v1.2 (Streamable HTTP)', targets, internal, (endpointUrl) =>
      agentRun({
        typeVersion: 1.2,
        parameters: {
          endpointUrl,
          serverTransport: 'httpStreamable',
          include: 'all',
          options: { timeout: 3000 },
        },
      }),
    );
  });

  it('chat model credentials (openAiApi url, ollamaApi baseUrl, anthropicApi url) refuse loopback', async () => {
    const chain = async (model: Json): Promise<Answer> => {
      const { said } = await runWorkflow(
        [
          {
            name: 'Chain',
            type: `${LC}.chainLlm`,
            typeVersion: 1.7,
            parameters: { promptType: 'define', text: 'hello' },
          },
          { name: 'Model', ...model },
        ],
        {
          Start: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] },
          Model: { ai_languageModel: [[{ node: 'Chain', type: 'ai_languageModel', index: 0 }]] },
        },
      );
      return { status: 200, said };
    };
    const targets = [
      ...loopbackUrls(internal.port, '/v1').filter(([l]) =>
        ['127.0.0.1', 'localhost', '[::1]', '0x7f000001', 'allowed-userinfo@127.0.0.1'].includes(l),
      ),
      ...redirects(internal.port).slice(0, 2),
    ];
    await expectRefused('lmChatOpenAi (openAiApi url)', targets, internal, async (url) => {
      const cred = await createCredential('openAiApi', { apiKey: 'sk-audit', url });
      return chain({
        type: `${LC}.lmChatOpenAi`,
        typeVersion: 1.2,
        parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
        credentials: { openAiApi: { id: cred, name: 'openai' } },
      });
    });
    await expectRefused('lmChatOllama (ollamaApi baseUrl)', targets, internal, async (url) => {
      const cred = await createCredential('ollamaApi', { baseUrl: url.replace('/v1', '') });
      return chain({
        type: `${LC}.lmChatOllama`,
        typeVersion: 1,
        parameters: { model: 'llama3.2', options: {} },
        credentials: { ollamaApi: { id: cred, name: 'ollama' } },
      });
    });
    await expectRefused('lmChatAnthropic (anthropicApi url)', targets, internal, async (url) => {
      const cred = await createCredential('anthropicApi', { apiKey: 'k', url: url.replace('/v1', '') });
      return chain({
        type: `${LC}.lmChatAnthropic`,
        typeVersion: 1.3,
        parameters: { model: 'claude-sonnet-4-5-20250929', options: {} },
        credentials: { anthropicApi: { id: cred, name: 'anthropic' } },
      });
    });
  });

  // ------------------------------------------------------------------ TCP: workflows

  it('credential tests of TCP clients (PostgreSQL, MySQL, Redis, FTP, SFTP, SMTP, IMAP) refuse loopback hosts', async () => {
    const port = String(tcp.port);
    const cases: Array<[string, (host: string) => Record<string, string>]> = [
      ['postgres', (host) => ({ host, port, database: 'x', user: 'x', password: 'x' })],
      ['mySql', (host) => ({ host, port, database: 'x', user: 'x', password: 'x' })],
      ['redis', (host) => ({ host, port })],
      ['ftp', (host) => ({ host, port, username: 'x', password: 'x' })],
      ['sftp', (host) => ({ host, port, username: 'x', password: 'x' })],
      ['smtp', (host) => ({ host, port, user: 'x', password: 'x', secure: 'false' })],
      ['imap', (host) => ({ host, port, user: 'x', password: 'x', secure: 'false' })],
    ];
    const hosts: Array<[string, string]> = [
      ...loopbackHosts.map((h): [string, string] => [h, h]),
      ['metadata', '169.254.169.254'],
    ];
    for (const [type, data] of cases)
      await expectRefused(`credential test ${type}`, hosts, tcp, (host) => credentialTest(type, data(host)));
  });

  it('database, Redis, mail, FTP and SSH nodes refuse loopback hosts when they run', async () => {
    const port = String(tcp.port);
    const hosts: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.1'],
      ['localhost', 'localhost'],
      ['::ffff:127.0.0.1', '::ffff:127.0.0.1'],
      ['2130706433', '2130706433'],
    ];
    const nodeRun = async (type: string, data: Record<string, string>, probe: Json): Promise<Answer> => {
      const id = await createCredential(type, data);
      const { said } = await runWorkflow([{ ...probe, credentials: { [type]: { id, name: type } } }]);
      return { status: 200, said };
    };
    await expectRefused('postgres node', hosts, tcp, (host) =>
      nodeRun(
        'postgres',
        { host, port, database: 'x', user: 'x' },
        node('n8n-nodes-base.postgres', 2.5, { operation: 'executeQuery', query: 'SELECT 1', options: {} }),
      ),
    );
    await expectRefused('mySql node', hosts, tcp, (host) =>
      nodeRun(
        'mySql',
        { host, port, database: 'x', user: 'x' },
        node('n8n-nodes-base.mySql', 2.4, { operation: 'executeQuery', query: 'SELECT 1', options: {} }),
      ),
    );
    await expectRefused('redis node', hosts, tcp, (host) =>
      nodeRun('redis', { host, port }, node('n8n-nodes-base.redis', 1, { operation: 'info' })),
    );
    await expectRefused('emailSend node', hosts, tcp, (host) =>
      nodeRun(
        'smtp',
        { host, port, secure: 'false' },
        node('n8n-nodes-base.emailSend', 2.1, {
          fromEmail: 'a@example.com',
          toEmail: 'b@example.com',
          subject: 's',
          emailFormat: 'text',
          text: 't',
          options: {},
        }),
      ),
    );
    await expectRefused('ftp node (list)', hosts, tcp, (host) =>
      nodeRun(
        'ftp',
        { host, port },
        node('n8n-nodes-base.ftp', 1, { protocol: 'ftp', operation: 'list', path: '/' }),
      ),
    );
    await expectRefused('ssh node', hosts, tcp, (host) =>
      nodeRun(
        'sshPassword',
        { host, port, username: 'x', password: 'x' },
        node('n8n-nodes-base.ssh', 1, { command: 'id' }),
      ),
    );
  });

  it('FTP on an allowed host:port: passive mode cannot send the data connection to a loopback port nobody named', async () => {
    // The guard checks the control connection's host:port only (openRemote → guardedAddress); basic-ftp
    // then opens the data connection to the EPSV/PASV port the server names on that address
    // (ftp-files.ts: allowSeparateTransferHost false pins the address, not the port).
    const id = await createCredential('ftp', {
      host: '127.0.0.1',
      port: String(ftp.port),
      username: 'x',
      password: 'x',
    });
    const before = tcp.connections();
    const { said } = await runWorkflow([
      {
        ...node('n8n-nodes-base.ftp', 1, { protocol: 'ftp', operation: 'list', path: '/' }),
        credentials: { ftp: { id, name: 'ftp' } },
      },
    ]);
    expect
      .soft(tcp.connections() - before, `the data connection went to 127.0.0.1:${tcp.port} (${said})`)
      .toBe(0);
  });

  // ------------------------------------------------------------------ HTTP: documents, flows, agents

  it('documents: POST /api/documents/load {source: url} answers 403 FORBIDDEN', async () => {
    const load = async (url: string): Promise<Answer> => {
      const res = await request('POST', '/api/documents/load', { source: 'url', url, topic: 'audit' });
      expect.soft(res.statusCode, `${url}: ${res.body}`).toBe(403);
      expect.soft(res.json(), url).toMatchObject({ error: true, code: 'FORBIDDEN' });
      return apiError(res.statusCode, res.body);
    };
    await expectRefused('documents load', loopbackUrls(internal.port), internal, load);
    await expectRefused('documents load', redirects(internal.port), internal, load);
    await expectRefused('documents load', [['metadata', METADATA]], internal, load);
    // The same host the workflows' $env trusts is refused here (this client trusts OUTBOUND_ALLOW_HOSTS only).
    await expectRefused(
      'documents load',
      [['$env-named host', `http://127.0.0.1:${envExposed.port}/`]],
      envExposed,
      load,
    );
  });

  it('Flowise vector upsert: a loader URL (overrideConfig.url) answers 403 FORBIDDEN', async () => {
    const template = readFileSync(new URL('./fixtures/flowise/WebPage QnA.json', import.meta.url), 'utf8');
    const created = await request('POST', '/api/v1/chatflows', {
      name: 'audit WebPage QnA',
      flowData: template,
    });
    expect(created.statusCode, created.body).toBe(201);
    const flowId = (created.json() as { id: string }).id;
    const upsert = async (url: string): Promise<Answer> => {
      const res = await request('POST', `/api/v1/vector/upsert/${flowId}`, { overrideConfig: { url } });
      expect.soft(res.statusCode, `${url}: ${res.body}`).toBe(403);
      return apiError(res.statusCode, res.body);
    };
    await expectRefused('flowise upsert (cheerio loader)', loopbackUrls(internal.port), internal, upsert);
    await expectRefused('flowise upsert (cheerio loader)', redirects(internal.port), internal, upsert);
    await expectRefused('flowise upsert (cheerio loader)', [['metadata', METADATA]], internal, upsert);
  });

  it('agents: saving an MCP server tool on a loopback URL is a 400 naming the tool', async () => {
    const save = async (url: string): Promise<Answer> => {
      const res = await request('POST', '/api/agents', {
        name: 'audit',
        model: 'llama3.2',
        tools: [{ type: 'mcp', name: 'mcp:probe', url }],
      });
      expect.soft(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect.soft(res.body, url).toContain('tools[0]');
      return apiError(res.statusCode, res.body);
    };
    await expectRefused('agent MCP tool', loopbackUrls(internal.port, '/mcp'), internal, save);
    await expectRefused('agent MCP tool', [['metadata', METADATA]], internal, save);
    // Redirects are not followed by the MCP client at all; the allowed host's 302 must not lead on.
    for (const [label, url] of redirects(internal.port)) {
      const before = reached(internal);
      const answer = await save(url);
      expect.soft(answer.status, label).toBe(400);
      expect.soft(reached(internal) - before, `agent MCP tool [${label}] reached the listener`).toBe(0);
    }
  });
  // ------------------------------------------------------------------ triggers (at activation)

  it('listening and registering triggers (IMAP, Redis, Postgres, RSS, Telegram) refuse loopback at activation', async () => {
    const workflows = p.ctx.apis.workflows;
    if (!workflows) throw new Error('workflows module missing');
    // What the listeners report goes to the platform's log: kept here to read the refusal.
    const warnings: Array<{ workflowId?: string; message: string }> = [];
    const log = p.ctx.log as unknown as { warn: (...args: unknown[]) => void };
    const warn = log.warn;
    log.warn = function (this: unknown, ...args: unknown[]) {
      const obj = args[0] as { err?: { message?: string }; workflowId?: string } | undefined;
      if (obj && typeof obj === 'object' && obj.err)
        warnings.push({
          ...(obj.workflowId ? { workflowId: obj.workflowId } : {}),
          message: String(obj.err.message),
        });
      return warn.apply(this, args);
    };
    const port = String(tcp.port);
    const activate = async (trigger: Json, recorder: Recorder, label: string): Promise<void> => {
      const created = await request('POST', '/api/v1/workflows', {
        name: `audit trigger ${randomBytes(4).toString('hex')}`,
        nodes: [{ id: 'T', name: 'Trigger', position: [0, 0], ...trigger }],
        connections: {},
        settings: {},
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = (created.json() as { id: string }).id;
      const before = reached(recorder);
      const activated = await request('POST', `/api/v1/workflows/${id}/activate`, {});
      let said = activated.statusCode === 200 ? '' : apiError(activated.statusCode, activated.body).said;
      if (activated.statusCode === 200) {
        // The listener starts (and connects, or is refused) in the refresh the activation queued.
        await workflows.listeners.refresh(p.accountId, id);
        const seen = await until(
          () => warnings.find((w) => w.workflowId === id),
          `${label}: the listener's refusal in the log`,
          8_000,
        ).catch(() => undefined);
        said = seen?.message ?? '(no refusal logged)';
        await request('POST', `/api/v1/workflows/${id}/deactivate`, {});
      }
      expect.soft(said, `${label} should be refused: ${said}`).toMatch(REFUSED);
      expect.soft(reached(recorder) - before, `${label} reached the listener`).toBe(0);
    };
    try {
      for (const host of ['127.0.0.1', 'localhost', '::ffff:127.0.0.1', '2130706433']) {
        const imap = await createCredential('imap', {
          host,
          port,
          user: 'x',
          password: 'x',
          secure: 'false',
        });
        await activate(
          {
            type: 'n8n-nodes-base.emailReadImap',
            typeVersion: 2,
            parameters: { mailbox: 'INBOX', postProcessAction: 'nothing', options: {} },
            credentials: { imap: { id: imap, name: 'imap' } },
          },
          tcp,
          `emailReadImap [${host}]`,
        );
        const redis = await createCredential('redis', { host, port });
        await activate(
          {
            type: 'n8n-nodes-base.redisTrigger',
            typeVersion: 1,
            parameters: { channels: 'audit', options: {} },
            credentials: { redis: { id: redis, name: 'redis' } },
          },
          tcp,
          `redisTrigger [${host}]`,
        );
        const pg = await createCredential('postgres', { host, port, database: 'x', user: 'x' });
        await activate(
          {
            type: 'n8n-nodes-base.postgresTrigger',
            typeVersion: 1,
            parameters: { triggerMode: 'listenTrigger', channelName: 'audit' },
            credentials: { postgres: { id: pg, name: 'pg' } },
          },
          tcp,
          `postgresTrigger [${host}]`,
        );
      }
      for (const [label, url] of loopbackUrls(internal.port, '/feed').slice(0, 4)) {
        await activate(
          { type: 'n8n-nodes-base.rssFeedReadTrigger', typeVersion: 1, parameters: { feedUrl: url } },
          internal,
          `rssFeedReadTrigger [${label}]`,
        );
        const bot = await createCredential('telegramApi', {
          accessToken: '1:abc',
          baseUrl: url.replace('/feed', ''),
        });
        await activate(
          {
            type: 'n8n-nodes-base.telegramTrigger',
            typeVersion: 1.2,
            parameters: { updates: ['message'], additionalFields: {} },
            credentials: { telegramApi: { id: bot, name: 'bot' } },
          },
          internal,
          `telegramTrigger setWebhook [${label}]`,
        );
      }
    } finally {
      log.warn = warn;
    }
  });

  // ------------------------------------------------------------------ model servers

  it("Ollama model management: a pull naming a loopback registry is not relayed to the operator's Ollama", async () => {
    // The platform talks only to its configured Ollama; a model name with a registry host makes that
    // server connect there (Ollama pulls `host:port/namespace/model` from that host). The name goes
    // from POST /api/pull (ollama-manage-routes.ts) through ModelManagement.pull to OllamaProvider.pull
    // as given; only the fake Ollama's request log can show it here (no real registry fetch happens).
    for (const name of [
      `127.0.0.1:${tcp.port}/library/audit:latest`,
      `localhost:${tcp.port}/library/audit`,
      `[::1]:${tcp.port}/library/audit`,
      '169.254.169.254/library/audit',
    ]) {
      const before = bed.ollama.requests.length;
      const res = await request('POST', '/api/pull', { model: name, stream: false });
      const relayed = bed.ollama.requests
        .slice(before)
        .filter((r) => r.path === '/api/pull')
        .map((r) => String((r.body as { model?: unknown } | null)?.model ?? ''));
      expect
        .soft(relayed, `the pull of '${name}' went to Ollama (${res.statusCode} ${res.body})`)
        .toEqual([]);
      expect.soft(res.statusCode, `pull of '${name}': ${res.body}`).toBeGreaterThanOrEqual(400);
    }
  });
});
