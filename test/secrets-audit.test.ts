/**
 * Secrets audit (written as an audit, kept as the regression test). Every kind of secret a tenant or
 * the operator hands the platform is stored once with a distinctive marker (`SECRETMARK-<kind>-<run>`),
 * or, where the platform makes the value itself (API keys, tokens, session cookies), its value is
 * recorded; some are used by workflow runs that succeed and by runs that fail while holding them. Then
 * the values are looked for where they must never be: every row of every table (read directly through
 * the platform's connection, SQLite and PostgreSQL), the Redis keys of the platform, every GET answer
 * of the OpenAPI document and the answers about the stored things, run data and the errors of failed
 * runs, request logs and the audit trail, the CLI's exports, and the server's own log (captured).
 *
 * Where the platform is unsafe today the probe fails and stays failing until the source is fixed.
 * Constant-time comparisons are checked by reading the code; see the report that came with this file.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../src/cli/backup.js';
import { keysCommand } from '../src/cli/keys.js';
import { usersCommand } from '../src/cli/users.js';
import { workflowsCommand } from '../src/cli/workflows.js';
import { parseConfig } from '../src/config.js';
import type { Dialect } from '../src/core/db/types.js';
import { CREDENTIAL_TYPES, OPTIONAL_CREDENTIAL_FIELDS } from '../src/modules/workflows/schemas.js';
import { toolCallsThenText } from './agents/support.js';
import { connectAccount, SESSION_SECRET } from './game/connect.js';
import { FAKE_API_KEY, FAKE_CLIENT_SECRET, FakeGamePlatform } from './game/fake-game-platform.js';
import { freePort } from './helpers/listening.js';
import { createTestPlatform, deleteRedisPrefixes, type TestPlatform, testRedis } from './helpers/platform.js';
import { redisAvailable, testDialects, uniqueName } from './helpers/services.js';
import { until } from './helpers/until.js';
import { testModels } from './llm/support.js';
import { startShop, UPSTREAM_TOKEN, type Upstream } from './mcp/upstream.js';
import { type FakeLlmServer, startFakeOllama, startFakeOpenAi } from './support/fake-llm/index.js';
import { FakeOAuth2 } from './workflows/support/fake-oauth2.js';
import { connect as oauthConsent } from './workflows/support/oauth2-consent.js';
import { flow } from './workflows/support.js';

const dialects = await testDialects();
const withRedis = await redisAvailable();
const LC = '@n8n/n8n-nodes-langchain';
const OWNER_EMAIL = 'owner@localhost';

// ---------------------------------------------------------------------------------------------
// The server log: the platform's pino writes to process.stdout when its `write` is not the stream's
// own (pino's tools.js), so every line from the first one on comes here, whatever logger child wrote it.

const logLines: string[] = [];
const realStdoutWrite = process.stdout.write;
beforeAll(() => {
  process.stdout.write = function write(this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    if (text.startsWith('{"level":')) {
      logLines.push(text);
      return true;
    }
    return (realStdoutWrite as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  } as typeof process.stdout.write;
});
afterAll(() => {
  process.stdout.write = realStdoutWrite;
});

// ---------------------------------------------------------------------------------------------
// Secrets and where they were found.

class SecretBook {
  /** label → value. */
  readonly values = new Map<string, string>();

  add(label: string, value: string): string {
    if (value.length < 8) throw new Error(`secret '${label}' is too short to look for: ${value}`);
    this.values.set(label, value);
    return value;
  }

  /** The labels of the secrets `text` holds: as given, base64 (a Basic header), or URL-encoded. */
  leaks(text: string): string[] {
    const out: string[] = [];
    for (const [label, value] of this.values) {
      const forms = new Set([
        value,
        Buffer.from(value).toString('base64'),
        Buffer.from(value).toString('base64url'),
        encodeURIComponent(value),
      ]);
      if ([...forms].some((f) => text.includes(f))) out.push(label);
    }
    return out;
  }
}

interface Reply {
  status: number;
  text: string;
  json(): unknown;
}

/** Where a secret was found: `where` and the labels. */
type Finding = { where: string; secrets: string[] };

// ---------------------------------------------------------------------------------------------
// Loopback servers.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A downstream that records what it gets. `/ok…` answers 200 `{ok: true}`; `/deny…` answers 401 with
 * everything it was sent (header values, the query, a Basic header decoded) in the fields where APIs
 * put their message; `/graphql-deny` the same as GraphQL `errors`; `/v1/…` and `/openai/v1/…` as an
 * OpenAI-style refusal naming the key it was given ("Incorrect API key provided: …").
 */
async function startEcho(): Promise<{ base: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const values = Object.entries(req.headers)
        .filter(([name]) => !['host', 'connection', 'content-length', 'accept-encoding'].includes(name))
        .map(([, v]) => String(v).replace(/^(Bearer|Basic)\s+/i, ''));
      const basic = /^Basic\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
      if (basic) values.push(Buffer.from(basic, 'base64').toString('utf8'));
      const echo = `${values.join(' ')} ${req.url ?? ''} ${body}`.slice(0, 4000);
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      };
      if (path.startsWith('/ok')) return send(200, { ok: true });
      if (path.startsWith('/graphql-deny'))
        return send(200, { data: null, errors: [{ message: `not authorised: ${echo}` }] });
      if (path.startsWith('/deny'))
        return send(401, {
          message: `denied: ${echo}`,
          error: { message: `denied: ${echo}` },
          errors: [{ message: `denied: ${echo}` }],
          description: echo,
        });
      if (path.startsWith('/v1/') || path.startsWith('/openai/v1/'))
        return send(401, {
          error: {
            message: `Incorrect API key provided: ${echo}`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      send(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The platform: every module, the server log on, on SQLite or a PostgreSQL schema of its own.

interface Audited {
  p: TestPlatform;
  url: string;
  redisPrefixes: string[];
  close(): Promise<void>;
}

async function auditedPlatform(dialect: Dialect, env: Record<string, string>): Promise<Audited> {
  const port = await freePort();
  const queuePrefix = uniqueName('qsa');
  const redisPrefix = `${uniqueName('rsa')}:`;
  const p = await createTestPlatform({
    dialect,
    env: {
      LOG_LEVEL: 'debug',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      QUEUE_PREFIX: queuePrefix,
      REDIS_PREFIX: redisPrefix,
      ...env,
    },
    redis: withRedis,
    logger: true,
  });
  const { app } = p;
  await app.listen({ port, host: '127.0.0.1' });
  return {
    p,
    url: `http://127.0.0.1:${port}`,
    redisPrefixes: [queuePrefix, redisPrefix.replace(/:$/, '')],
    async close() {
      app.server.closeAllConnections();
      await p.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Credentials of every type: each secret field a marker, every other field a plain value.

const NOT_SECRET_FIELDS = new Set(['tokenExpiredStatusCode', 'oauthTokenData', 'publicKey', 'keyType']);
const isSecretField = (field: string) =>
  !NOT_SECRET_FIELDS.has(field) &&
  !/url|endpoint/i.test(field) &&
  /password|secret|token|apikey|privatekey|passphrase|servicerole|^value$|headervalue|consumerkey|^headers$|^json$/i.test(
    field,
  );

function plainValue(field: string, base: string): string {
  if (field === 'host') return '127.0.0.1';
  if (field === 'port') return '1';
  if (/email/i.test(field)) return 'audit@example.com';
  if (/url|endpoint|server/i.test(field)) return `${base}/ok`;
  if (field === 'label') return 'audit:label';
  if (field === 'region') return 'us-east-1';
  return `audit-${field}`;
}

/** The data of one credential of `type` and the secrets in it (label → value). */
function credentialData(
  type: string,
  mark: (kind: string) => string,
  base: string,
): { data: Record<string, string>; secrets: Array<[string, string]> } {
  const required: readonly string[] = CREDENTIAL_TYPES[type as keyof typeof CREDENTIAL_TYPES];
  const optional: readonly string[] = OPTIONAL_CREDENTIAL_FIELDS[type as keyof typeof CREDENTIAL_TYPES] ?? [];
  const data: Record<string, string> = {};
  const secrets: Array<[string, string]> = [];
  const secret = (field: string) => {
    const value = mark(`${type}-${field}`);
    secrets.push([`credential ${type}.${field}`, value]);
    return value;
  };
  for (const field of required) data[field] = isSecretField(field) ? secret(field) : plainValue(field, base);
  for (const field of optional) if (isSecretField(field)) data[field] = secret(field);
  // Fields whose value has a shape of its own.
  if (type === 'httpMultipleHeadersAuth')
    data.headers = JSON.stringify({ values: [{ name: 'X-Audit-Multi', value: secret('headers.value') }] });
  if (type === 'httpCustomAuth')
    data.json = JSON.stringify({ headers: { 'X-Audit-Custom': secret('json.headers') } });
  if (type === 'jwtAuth') {
    for (const f of Object.keys(data)) if (f !== 'secret') delete data[f];
    Object.assign(data, { keyType: 'passphrase', algorithm: 'HS256' });
  }
  if (type === 'oAuth2Api')
    Object.assign(data, {
      grantType: 'clientCredentials',
      accessTokenUrl: `${base}/token`,
      authentication: 'body',
    });
  if (type === 'qdrantApi') data.qdrantUrl = `${base}/ok`;
  if (type === 'smtp') data.user = 'audit-user';
  if (type === 'postgres' || type === 'mySql') data.user = 'audit-user';
  if (type === 'aws') data.accessKeyId = 'AKIAAUDITAUDITAUDIT';
  // Values the platform reads as flags or numbers stay plain.
  for (const flag of ['ssl', 'secure', 'allowUnauthorizedCerts', 'disableTlsVerification'])
    if (data[flag] !== undefined) delete data[flag];
  return { data, secrets };
}

// ---------------------------------------------------------------------------------------------

describe.each(dialects)('secrets audit on %s', (dialect) => {
  const run = randomBytes(5).toString('hex');
  const mark = (kind: string) => `SECRETMARK-${kind}-${run}`;
  const book = new SecretBook();
  const firstLog = { index: 0 };

  let bed: Audited;
  let p: TestPlatform;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  let oauth: FakeOAuth2;
  let game: FakeGamePlatform;
  let ollama: FakeLlmServer;
  let openai: FakeLlmServer;
  let shop: Upstream;
  const encryptionKey = randomBytes(32).toString('hex');
  const operatorKey = mark('operator-openai-key');
  const gitPassword = mark('git-password');
  /** Stored things, by kind, for the answers about them. */
  const ids = {
    credentials: new Map<string, string>(),
    workflows: [] as string[],
    executions: [] as string[],
    keys: [] as string[],
    agents: [] as string[],
  };

  const api = async (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    key?: string | null,
  ): Promise<Reply> => {
    const res = await p.request({
      method,
      url,
      ...(payload !== undefined ? { payload: payload as object } : {}),
      ...(key !== undefined ? { key } : {}),
    });
    return { status: res.statusCode, text: res.body, json: () => res.json() };
  };
  const created = async (url: string, payload: unknown): Promise<Record<string, unknown>> => {
    const res = await api('POST', url, payload);
    if (res.status !== 201 && res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${res.text}`);
    return res.json() as Record<string, unknown>;
  };
  /** `allowed`: secrets the answer is for (a session's own CSRF token). */
  const expectClean = (where: string, text: string, allowed: string[] = []) => {
    const found = book.leaks(text).filter((label) => !allowed.includes(label));
    expect(found, `${where} holds secrets: ${text.slice(0, 600)}`).toEqual([]);
  };
  /** Runs a workflow by hand (synchronously) and keeps its execution id. */
  const runWorkflow = async (body: unknown): Promise<{ id: string; text: string; error: string }> => {
    const id = (await created('/api/v1/workflows', body)).id as string;
    ids.workflows.push(id);
    const res = await api('POST', `/api/v1/workflows/${id}/run`, {});
    if (res.status !== 200) throw new Error(`run: ${res.status} ${res.text}`);
    const execution = res.json() as {
      id: string;
      data?: { resultData?: { error?: { message?: string; description?: string } } };
    };
    ids.executions.push(execution.id);
    const error = execution.data?.resultData?.error;
    return { id: execution.id, text: res.text, error: `${error?.message ?? ''} ${error?.description ?? ''}` };
  };

  beforeAll(async () => {
    firstLog.index = logLines.length;
    [echo, shop, ollama] = await Promise.all([startEcho(), startShop(), startFakeOllama()]);
    openai = await startFakeOpenAi({ apiKey: operatorKey });
    oauth = new FakeOAuth2();
    oauth.clientSecret = mark('oauth2-client-secret');
    await oauth.start();
    game = await new FakeGamePlatform().start();
    const closedPort = await freePort();
    bed = await auditedPlatform(dialect, {
      ENCRYPTION_KEY: encryptionKey,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
      OUTBOUND_TIMEOUT_MS: '5000',
      LLM_MODELS: JSON.stringify([
        ...testModels(ollama, openai),
        // A model whose key is an account credential; its upstream (the echo) names the key it got.
        {
          name: 'audit-credential-key',
          provider: 'openai',
          baseUrl: `${echo.base}/v1`,
          upstreamModel: 'gpt-4o-mini',
          apiKeyCredential: 'audit gateway key',
          timeoutMs: 3000,
        },
      ]),
      OPENAI_BASE_URL: openai.url,
      OLLAMA_URL: ollama.url,
      OPENAI_API_KEY: operatorKey,
      SOURCE_CONTROL_REPO_URL: `https://audit:${gitPassword}@127.0.0.1:${closedPort}/repo.git`,
      SOURCE_CONTROL_TIMEOUT_MS: '10000',
      ...game.env(),
    });
    p = bed.p;
    book.add('ENCRYPTION_KEY', encryptionKey);
    book.add('ENCRYPTION_KEY (its bytes as base64)', Buffer.from(encryptionKey, 'hex').toString('base64'));
    book.add('OPENAI_API_KEY (operator)', operatorKey);
    book.add('SOURCE_CONTROL_REPO_URL password', gitPassword);
    book.add('GAME_API_KEY', FAKE_API_KEY);
    book.add('GAME_OAUTH_CLIENT_SECRET', FAKE_CLIENT_SECRET);
    book.add('OAuth2 client secret', oauth.clientSecret);
    book.add('MCP server token (agent tool)', UPSTREAM_TOKEN);
    book.add('bootstrap admin key', p.adminKey);
    book.add('bootstrap admin key (without last 4)', p.adminKey.slice(0, -4));
  });

  afterAll(async () => {
    await bed?.close();
    if (withRedis && bed) await deleteRedisPrefixes(bed.redisPrefixes);
    await Promise.all([
      echo?.close(),
      shop?.close(),
      ollama?.close(),
      openai?.close(),
      oauth?.stop(),
      game?.stop(),
    ]);
  });

  // -------------------------------------------------------------------------------------------
  // API keys and customer tokens

  it('API keys made by the route and by the CLI are stored as their SHA-256, never as the key', async () => {
    const routeKey = await p.createKey({
      name: 'audit route',
      type: 'production',
      role: 'Admin',
      services: ['*'],
    });
    book.add('API key (route)', routeKey.key);
    book.add('API key (route, without last 4)', routeKey.key.slice(0, -4));
    const rotated = await api('POST', `/v1/api-keys/${routeKey.id}/rotate`, { gracePeriodSeconds: 3600 });
    expect(rotated.status, rotated.text).toBe(200);
    const rotatedKey = (rotated.json() as { key: string }).key;
    book.add('API key (rotated by route)', rotatedKey);
    book.add('API key (rotated, without last 4)', rotatedKey.slice(0, -4));
    const auth = p.ctx.apis.auth;
    if (!auth) throw new Error('auth module missing');
    const printed: string[] = [];
    const code = await keysCommand(
      auth,
      ['create', '--type', 'development', '--role', 'Writer', '--name', 'audit cli'],
      (line) => printed.push(line),
    );
    expect(code, printed.join('\n')).toBe(0);
    const cliKey = /Key \(shown once\): (\S+)/.exec(printed.join('\n'))?.[1] ?? '';
    expect(cliKey).toMatch(/^DEV_API_/);
    book.add('API key (CLI)', cliKey);
    book.add('API key (CLI, without last 4)', cliKey.slice(0, -4));
    const listed: string[] = [];
    expect(await keysCommand(auth, ['list'], (line) => listed.push(line))).toBe(0);
    expectClean('`platform keys list`', listed.join('\n'));

    const rows = await p.ctx.db.selectFrom('api_keys').selectAll().execute();
    for (const [label, value] of [
      ['route', rotatedKey],
      ['CLI', cliKey],
    ] as const) {
      const row = rows.find((r) => r.hash === createHash('sha256').update(value).digest('hex'));
      expect(row, `the ${label} key's row is found by the SHA-256 of the key`).toBeDefined();
      expect(row?.hash).not.toBe(value);
      expectClean(`api_keys row of the ${label} key`, JSON.stringify(row));
    }
    // The old value of the rotated key lives on as previous_hash only.
    const routeRow = rows.find((r) => r.id === routeKey.id);
    expect(routeRow?.previous_hash).toBe(createHash('sha256').update(routeKey.key).digest('hex'));
    ids.keys.push(routeKey.id);

    // n8n's header for the same keys.
    const n8nHeader = await p.request({
      method: 'GET',
      url: '/api/v1/workflows',
      key: null,
      headers: { 'x-n8n-api-key': rotatedKey },
    });
    expect(n8nHeader.statusCode, n8nHeader.body).toBe(200);
    // Flowise's route that names a key in its path: the answer does not hold it.
    const flowise = await api('GET', `/api/v1/chatflows/apikey/${rotatedKey}`);
    expect(flowise.status, flowise.text).toBe(200);
    expectClean('GET /api/v1/chatflows/apikey/{key}', flowise.text);
    for (const url of ['/v1/api-keys', `/v1/api-keys/${routeKey.id}`])
      expectClean(`GET ${url}`, (await api('GET', url)).text);
  });

  it('a customer token is never stored, and its use leaves no trace of it', async () => {
    const minted = await api('POST', '/v1/auth/tokens', {
      customerId: 'audit-customer',
      scopes: ['commerce:read', 'agent:read'],
    });
    expect(minted.status, minted.text).toBe(201);
    const token = (minted.json() as { token: string }).token;
    book.add('customer token', token);
    const used = await api('GET', '/api/cart', undefined, token);
    expect(used.status, used.text).not.toBe(401);
    expectClean('GET /api/cart with a customer token', used.text);
    const wrong = await api('GET', '/api/cart', undefined, `${token.slice(0, -6)}AAAAAA`);
    expect(wrong.status).toBe(401);
    expectClean('a refused customer token', wrong.text);
  });

  // -------------------------------------------------------------------------------------------
  // The portal: passwords, sessions, CSRF, one-time links

  it('portal passwords are scrypt hashes; session, CSRF, setup and invite tokens are not stored or echoed', async () => {
    const portal = p.ctx.apis.portal;
    const auth = p.ctx.apis.auth;
    if (!portal || !auth) throw new Error('portal module missing');
    const link = await portal.members.setupLink(OWNER_EMAIL);
    const setupToken = new URL(link.url.replace('#/', '')).searchParams.get('token') ?? '';
    book.add('portal setup token', setupToken);
    const ownerPassword = book.add('owner password (setup link)', `${mark('setup-pw')} violet tundra`);
    const setup = await api('POST', '/v1/auth/setup', { token: setupToken, password: ownerPassword }, null);
    expect(setup.status, setup.text).toBe(200);
    const login = await p.request({
      method: 'POST',
      url: '/v1/auth/login',
      key: null,
      payload: { email: OWNER_EMAIL, password: ownerPassword },
    });
    expect(login.statusCode, login.body).toBe(200);
    const cookie = /^(platform_session=[^;]+)/.exec(String(login.headers['set-cookie']))?.[1] ?? '';
    book.add('session cookie', cookie.replace('platform_session=', ''));
    const csrf = (login.json() as { csrfToken: string }).csrfToken;
    book.add('CSRF token', csrf);
    const session = (options: { method: 'GET' | 'POST'; url: string; payload?: object; csrf?: string }) =>
      p.request({
        method: options.method,
        url: options.url,
        key: null,
        headers: { cookie, 'x-csrf-token': options.csrf ?? csrf },
        ...(options.payload ? { payload: options.payload } : {}),
      });
    const invited = await session({
      method: 'POST',
      url: '/v1/members/invites',
      payload: { email: 'audit-dev@example.com', role: 'developer' },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const inviteToken =
      /[?&]token=([\w-]+)/.exec((invited.json() as { inviteUrl: string }).inviteUrl)?.[1] ?? '';
    book.add('portal invite token', inviteToken);
    const memberPassword = book.add('member password (invite)', `${mark('member-pw')} copper meadow`);
    const accepted = await api(
      'POST',
      '/v1/auth/invites/accept',
      { token: inviteToken, name: 'audit dev', password: memberPassword },
      null,
    );
    expect(accepted.status, accepted.text).toBe(200);
    // The CLI sets a password from stdin.
    const cliPassword = book.add('member password (CLI set-password)', `${mark('cli-pw')} amber harbor`);
    const printed: string[] = [];
    const code = await usersCommand(
      { auth, portal },
      ['set-password', 'audit-dev@example.com'],
      (line) => printed.push(line),
      async () => cliPassword,
    );
    expect(code, printed.join('\n')).toBe(0);
    expectClean('`platform users set-password`', printed.join('\n'));
    // Refusals do not echo what was tried.
    const wrongPassword = book.add('a wrong password tried at login', `${mark('wrong-pw')} nope nope`);
    const refused = await api(
      'POST',
      '/v1/auth/login',
      { email: OWNER_EMAIL, password: wrongPassword },
      null,
    );
    expect(refused.status).toBe(401);
    expectClean('a refused login', refused.text);
    const wrongCsrf = book.add('a wrong CSRF token', mark('wrong-csrf'));
    const forged = await session({
      method: 'POST',
      url: '/v1/members/invites',
      payload: { email: 'x@example.com', role: 'viewer' },
      csrf: wrongCsrf,
    });
    expect(forged.statusCode).toBe(403);
    expectClean('a refused CSRF token', forged.body);
    const reused = await api('POST', '/v1/auth/setup', { token: setupToken, password: ownerPassword }, null);
    expect(reused.status).toBeGreaterThanOrEqual(400);
    expectClean('a reused setup link', reused.text);

    for (const url of ['/v1/auth/session', '/v1/auth/sessions', '/v1/members'])
      expectClean(`GET ${url} (session)`, (await session({ method: 'GET', url })).body, ['CSRF token']);
    const members = await p.ctx.db.selectFrom('members').select(['email', 'password_hash']).execute();
    for (const m of members.filter((row) => row.password_hash !== null))
      expect(m.password_hash, `${m.email}'s password is an scrypt hash`).toMatch(/^scrypt\$/);
  });

  // -------------------------------------------------------------------------------------------
  // Workflow credentials of every type

  it('every credential type is accepted, sealed at rest, and never shown back', async () => {
    const refusedTypes: string[] = [];
    for (const type of Object.keys(CREDENTIAL_TYPES)) {
      const { data, secrets } = credentialData(type, mark, echo.base);
      for (const [label, value] of secrets) book.add(label, value);
      const res = await api('POST', '/api/v1/credentials', { name: `audit ${type}`, type, data });
      if (res.status !== 201) {
        refusedTypes.push(`${type}: ${res.status} ${res.text.slice(0, 300)}`);
        continue;
      }
      expectClean(`POST /api/v1/credentials (${type})`, res.text);
      ids.credentials.set(type, (res.json() as { id: string }).id);
    }
    const rows = await p.ctx.db.selectFrom('credentials').select(['type', 'data']).execute();
    for (const row of rows) expect(row.data, `${row.type} is sealed (AES-GCM v1)`).toMatch(/^v1\./);
    const answers: Array<[string, string]> = [
      ['GET /api/v1/credentials', (await api('GET', '/api/v1/credentials?limit=250')).text],
    ];
    for (const [type, id] of ids.credentials)
      answers.push([`GET /api/v1/credentials/${type}`, (await api('GET', `/api/v1/credentials/${id}`)).text]);
    const header = ids.credentials.get('httpHeaderAuth') ?? '';
    const patched = await api('PATCH', `/api/v1/credentials/${header}`, {
      name: 'audit httpHeaderAuth renamed',
      data: { value: book.add('credential httpHeaderAuth.value (patched)', mark('patched-header')) },
      isPartialData: true,
    });
    expect(patched.status, patched.text).toBe(200);
    answers.push(['PATCH /api/v1/credentials/{id}', patched.text]);
    const findings: Finding[] = answers
      .map(([where, text]) => ({ where, secrets: book.leaks(text) }))
      .filter((f) => f.secrets.length > 0);
    expect(findings).toEqual([]);
    expect(refusedTypes, 'every type the schema lists is accepted with its fields').toEqual([]);
  });

  // -------------------------------------------------------------------------------------------
  // Workflow runs that hold credentials

  const credRef = (type: string) => ({
    [type]: { id: ids.credentials.get(type) ?? type, name: `audit ${type}` },
  });
  const httpNode = (name: string, type: string, url: string) => ({
    name,
    type: 'n8n-nodes-base.httpRequest',
    typeVersion: 4.2,
    parameters: {
      method: 'GET',
      url,
      authentication: 'genericCredentialType',
      genericAuthType: type,
      options: {},
    },
    credentials: credRef(type),
  });
  const chain = (name: string, nodes: Array<Record<string, unknown>>) => ({
    name,
    nodes: [
      {
        id: 'start',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      ...nodes.map((n, i) => ({ id: `n${i}`, position: [(i + 1) * 200, 0], ...n })),
    ],
    connections: Object.fromEntries(
      ['Start', ...nodes.map((n) => n.name as string)]
        .slice(0, -1)
        .map((from, i) => [from, { main: [[{ node: nodes[i]?.name as string, type: 'main', index: 0 }]] }]),
    ),
  });

  it('a run that sends every HTTP credential (and an OAuth2 token) and succeeds keeps them out of its run data', async () => {
    const types = [
      'httpHeaderAuth',
      'httpBearerAuth',
      'httpQueryAuth',
      'httpBasicAuth',
      'httpCustomAuth',
      'httpMultipleHeadersAuth',
      'oAuth2Api',
    ];
    // The OAuth2 credential fetches its token from the fake provider (client credentials).
    const oauthCred = await created('/api/v1/credentials', {
      name: 'audit oauth2 client credentials',
      type: 'oAuth2Api',
      data: {
        grantType: 'clientCredentials',
        accessTokenUrl: `${oauth.base}/token`,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        authentication: 'body',
      },
    });
    ids.credentials.set('oAuth2Api', oauthCred.id as string);
    const before = echo.seen.length;
    const ran = await runWorkflow(
      chain(
        'audit: credentials that work',
        types.map((t, i) =>
          httpNode(`HTTP ${i}`, t, t === 'oAuth2Api' ? `${oauth.base}/api/me` : `${echo.base}/ok/${t}`),
        ),
      ),
    );
    expect(ran.error.trim(), ran.text.slice(0, 500)).toBe('');
    // The credentials did reach the downstream…
    const sent = JSON.stringify(echo.seen.slice(before));
    expect(sent).toContain(mark('patched-header'));
    expect(sent).toContain(mark('httpBearerAuth-token'));
    expect(oauth.apiCalls.at(-1)?.authorization).toMatch(/^Bearer at-/);
    for (const token of issuedOAuthTokens(oauth)) book.add(`OAuth2 token ${token.slice(0, 6)}`, token);
    // …and are nowhere in what the run recorded.
    expectClean('the run answer', ran.text);
    expectClean(
      'GET /api/v1/executions/{id}?includeData=true',
      (await api('GET', `/api/v1/executions/${ran.id}?includeData=true`)).text,
    );
  });

  it('a run whose HTTP Request fails against an upstream echoing the credential keeps it out of the error', async () => {
    const ran = await runWorkflow(
      chain('audit: HTTP Request denied', [
        httpNode('Denied header', 'httpHeaderAuth', `${echo.base}/deny/header`),
      ]),
    );
    expect(ran.error).toMatch(/401|denied|Authorization/i);
    expectClean('the failed HTTP Request run', ran.text);
    const basic = await runWorkflow(
      chain('audit: HTTP Request denied (basic)', [
        httpNode('Denied basic', 'httpBasicAuth', `${echo.base}/deny/basic`),
      ]),
    );
    expectClean('the failed HTTP Request run (basic)', basic.text);
    // Nothing listens: the error of a request whose URL carries the key in its query.
    const closed = await freePort();
    const unreachable = await runWorkflow(
      chain('audit: HTTP Request unreachable (query)', [
        httpNode('Unreachable', 'httpQueryAuth', `http://127.0.0.1:${closed}/x`),
      ]),
    );
    expect(unreachable.error.trim()).not.toBe('');
    expectClean('the failed HTTP Request run (query key, unreachable)', unreachable.text);
  });

  it('OAuth2: a token endpoint refusing with the client secret in its words, and a consent: no secret in the error, state or tokens stored in clear', async () => {
    oauth.tokenMode = 'refuse';
    const cred = await created('/api/v1/credentials', {
      name: 'audit oauth2 refused',
      type: 'oAuth2Api',
      data: {
        grantType: 'clientCredentials',
        accessTokenUrl: `${oauth.base}/token`,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        authentication: 'body',
      },
    });
    ids.credentials.set('oAuth2Api refused', cred.id as string);
    const refused = await runWorkflow(
      chain('audit: OAuth2 refused', [
        {
          ...httpNode('OAuth2 refused', 'oAuth2Api', `${oauth.base}/api/me`),
          credentials: { oAuth2Api: { id: cred.id, name: 'audit oauth2 refused' } },
        },
      ]),
    );
    oauth.tokenMode = 'ok';
    expect(refused.error).toMatch(/token endpoint/i);
    expectClean('the run whose token request was refused', refused.text);

    // The authorization-code consent (PKCE) through the platform's link and callback.
    const consentCred = await created('/api/v1/credentials', {
      name: 'audit oauth2 consent',
      type: 'oAuth2Api',
      data: {
        grantType: 'pkce',
        authUrl: `${oauth.base}/authorize`,
        accessTokenUrl: `${oauth.base}/token`,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        scope: 'read',
        authentication: 'header',
      },
    });
    const done = await oauthConsent(p, oauth, consentCred.id as string);
    expect(done.page.statusCode, done.page.body).toBe(200);
    book.add('OAuth2 state', done.callback.searchParams.get('state') ?? '');
    book.add('OAuth2 authorization code', done.callback.searchParams.get('code') ?? '');
    book.add('OAuth2 consent cookie', done.cookie.split('=').slice(1).join('='));
    for (const token of issuedOAuthTokens(oauth)) book.add(`OAuth2 token ${token.slice(0, 6)}`, token);
    const verifier = oauth.grants.find((g) => g.grant_type === 'authorization_code')?.form.code_verifier;
    book.add('OAuth2 PKCE code verifier', verifier ?? '');
    expectClean('the consent callback page', done.page.body);
    expectClean(
      'GET the consented credential',
      (await api('GET', `/api/v1/credentials/${consentCred.id}`)).text,
    );
  });

  // Nodes whose upstream answers a refusal naming the credential it was sent: the execution's error
  // (read by every reader of the workflow's executions) must not hold it.
  /** A manual run of a LangChain chain on an OpenAI model whose upstream echoes the key it was sent. */
  const chainOnEchoedKey = async (label: string, chain: Record<string, unknown>) => {
    const key = book.add(`credential openAiApi.apiKey (${label})`, mark(`echoed-openai-${label}`));
    const name = `audit echoed openai ${label}`;
    const cred = await created('/api/v1/credentials', {
      name,
      type: 'openAiApi',
      data: { apiKey: key, url: `${echo.base}/v1` },
    });
    return runWorkflow({
      name: `audit: a chain on a refused key (${label})`,
      nodes: [
        {
          id: 't',
          name: 'Start',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
        { id: 'c', name: 'Chain', position: [200, 0], ...chain },
        {
          id: 'm',
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          position: [200, 200],
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: cred.id, name } },
        },
      ],
      connections: {
        Start: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] },
        Model: { ai_languageModel: [[{ node: 'Chain', type: 'ai_languageModel', index: 0 }]] },
      },
    });
  };

  it('an LLM chat model node whose provider echoes the API key: the run error does not hold it', async () => {
    const ran = await chainOnEchoedKey('chain', {
      type: `${LC}.chainLlm`,
      typeVersion: 1.5,
      parameters: { promptType: 'define', text: 'hello' },
    });
    expect(ran.error).toMatch(/401|refused|Incorrect/i);
    expectClean('the run of an LLM chain whose provider refused the key', ran.text);
  });

  it('a chain that continues on fail writes the refusal into its item: the item does not hold the key', async () => {
    const ran = await chainOnEchoedKey('cof', {
      type: `${LC}.chainSummarization`,
      typeVersion: 2,
      continueOnFail: true,
      parameters: {},
    });
    // The run succeeds: the failure is an item of the chain's output.
    expect(ran.error.trim()).toBe('');
    expect(ran.text).toMatch(/401|refused|Incorrect/i);
    expectClean('the items of a chain that continued on fail', ran.text);
  });

  it('a GraphQL node whose endpoint echoes the header credential: the run error does not hold it', async () => {
    const ran = await runWorkflow(
      chain('audit: GraphQL refused', [
        {
          name: 'GraphQL',
          type: 'n8n-nodes-base.graphql',
          typeVersion: 1.1,
          parameters: {
            authentication: 'headerAuth',
            endpoint: `${echo.base}/graphql-deny`,
            requestFormat: 'json',
            query: '{ me { id } }',
          },
          credentials: credRef('httpHeaderAuth'),
        },
      ]),
    );
    expect(ran.error).toMatch(/not authorised/);
    expectClean('the run of a GraphQL node refused', ran.text);
  });

  it('an n8n API node whose server echoes the API key: the run error does not hold it', async () => {
    const key = book.add('credential n8nApi.apiKey (echoed)', mark('echoed-n8n-key'));
    const cred = await created('/api/v1/credentials', {
      name: 'audit echoed n8n',
      type: 'n8nApi',
      data: { apiKey: key, baseUrl: `${echo.base}/deny/api/v1` },
    });
    const ran = await runWorkflow(
      chain('audit: n8n API refused', [
        {
          name: 'n8n',
          type: 'n8n-nodes-base.n8n',
          typeVersion: 1,
          parameters: { resource: 'workflow', operation: 'getAll', returnAll: false, limit: 5 },
          credentials: { n8nApi: { id: cred.id, name: 'audit echoed n8n' } },
        },
      ]),
    );
    expect(ran.error).toMatch(/denied/);
    expectClean('the run of an n8n API node refused', ran.text);
  });

  it("a credential's test against a provider echoing the key: the answer does not hold it", async () => {
    const key = book.add('credential groqApi.apiKey (tested)', mark('tested-groq-key'));
    const cred = await created('/api/v1/credentials', {
      name: 'audit tested groq',
      type: 'groqApi',
      data: { apiKey: key, url: `${echo.base}/openai/v1` },
    });
    const tested = await api('POST', `/api/v1/credentials/${cred.id}/test`);
    expect(tested.status, tested.text).toBe(200);
    expect(tested.json()).toMatchObject({ status: 'Error' });
    expectClean('POST /api/v1/credentials/{id}/test', tested.text);
  });

  it('database, mail, SSH and file-server credentials: their tests and a failing node hold no password or key', async () => {
    // The credentials of every type made above: PostgreSQL (5432) and MySQL (3306) are real servers here
    // that refuse the user; Redis (6379) takes any password; the others find nothing listening.
    const types = [
      'postgres',
      'mySql',
      'redis',
      'smtp',
      'imap',
      'ftp',
      'sftp',
      'sshPassword',
      'sshPrivateKey',
    ];
    const findings: Finding[] = [];
    for (const type of types) {
      const id = ids.credentials.get(type);
      if (!id) throw new Error(`no ${type} credential`);
      const tested = await api('POST', `/api/v1/credentials/${id}/test`);
      expect(tested.status, `${type}: ${tested.text}`).toBe(200);
      expect(['OK', 'Error']).toContain((tested.json() as { status: string }).status);
      const found = book.leaks(tested.text);
      if (found.length > 0)
        findings.push({ where: `POST /api/v1/credentials/{${type}}/test`, secrets: found });
    }
    const pg = await runWorkflow(
      chain('audit: Postgres refused', [
        {
          name: 'Postgres',
          type: 'n8n-nodes-base.postgres',
          typeVersion: 2.6,
          parameters: { operation: 'executeQuery', query: 'SELECT 1', options: {} },
          credentials: credRef('postgres'),
        },
      ]),
    );
    expect(pg.error.trim()).not.toBe('');
    const found = book.leaks(pg.text);
    if (found.length > 0) findings.push({ where: 'the failed Postgres node run', secrets: found });
    expect(findings).toEqual([]);
  });

  // -------------------------------------------------------------------------------------------
  // Webhooks: the credentials a caller presents

  it('webhook authentication (header, basic, query, HMAC, JWT): right and wrong secrets are neither echoed nor recorded', async () => {
    const hook = (path: string, extra: Record<string, unknown>) =>
      flow(`audit webhook ${path}`, [
        { name: 'Webhook', type: 'webhook', parameters: { path, responseMode: 'lastNode', ...extra } },
        { name: 'Set', type: 'set', parameters: { values: { ok: true } } },
      ]);
    // Credentials of their own, so this probe does not depend on the others.
    const headerValue = book.add('webhook headerAuth value', mark('webhook-header'));
    const basicUser = 'audit-hook-user';
    const basicPassword = book.add('webhook basicAuth password', mark('webhook-basic-password'));
    const queryName = 'audit-token';
    const queryValue = book.add('webhook queryAuth value', mark('webhook-query'));
    const hmacSecret = book.add('webhook HMAC secret', mark('webhook-hmac'));
    const jwtSecret = book.add('webhook JWT secret', mark('webhook-jwt'));
    const own = async (type: string, data: Record<string, string>) =>
      (await created('/api/v1/credentials', { name: `audit hook ${type}`, type, data })).id as string;
    const cred = {
      header: await own('httpHeaderAuth', { name: 'X-Audit-Hook', value: headerValue }),
      basic: await own('httpBasicAuth', { user: basicUser, password: basicPassword }),
      query: await own('httpQueryAuth', { name: queryName, value: queryValue }),
      hmac: await own('hmacSecret', { secret: hmacSecret }),
      jwt: await own('jwtAuth', { keyType: 'passphrase', algorithm: 'HS256', secret: jwtSecret }),
    };
    const defs = [
      hook(`audit-header-${run}`, { authentication: 'headerAuth', credential: cred.header }),
      hook(`audit-basic-${run}`, { authentication: 'basicAuth', credential: cred.basic }),
      hook(`audit-query-${run}`, { authentication: 'queryAuth', credential: cred.query }),
      hook(`audit-hmac-${run}`, { authentication: 'hmac', credential: cred.hmac }),
      {
        name: 'audit webhook jwt',
        nodes: [
          {
            id: 'w',
            name: 'Webhook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 0],
            parameters: {
              path: `audit-jwt-${run}`,
              httpMethod: 'POST',
              authentication: 'jwtAuth',
              responseMode: 'onReceived',
            },
            credentials: { jwtAuth: { id: cred.jwt, name: 'audit hook jwtAuth' } },
          },
        ],
        connections: {},
      },
    ];
    for (const def of defs) {
      const id = (await created('/api/v1/workflows', def)).id as string;
      ids.workflows.push(id);
      const act = await api('POST', `/api/v1/workflows/${id}/activate`, {});
      expect(act.status, act.text).toBe(200);
    }
    const jwt = await new SignJWT({ sub: 'audit' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(jwtSecret));
    book.add('JWT presented to a webhook', jwt);
    const wrong = book.add('a wrong webhook secret tried', mark('wrong-webhook-secret'));
    const body = JSON.stringify({ hello: 'audit' });
    const call = (url: string, headers: Record<string, string>) =>
      p.app.inject({
        method: 'POST',
        url,
        payload: body,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const sign = (secret: string) => createHmac('sha256', secret).update(body).digest('base64');
    const cases: Array<[string, string, Record<string, string>, Record<string, string>]> = [
      [`/webhook/audit-header-${run}`, '', { 'x-audit-hook': headerValue }, { 'x-audit-hook': wrong }],
      [
        `/webhook/audit-basic-${run}`,
        '',
        { authorization: `Basic ${Buffer.from(`${basicUser}:${basicPassword}`).toString('base64')}` },
        { authorization: `Basic ${Buffer.from(`${basicUser}:${wrong}`).toString('base64')}` },
      ],
      [`/webhook/audit-query-${run}`, `?${queryName}=${queryValue}`, {}, {}],
      [`/webhook/audit-hmac-${run}`, '', { 'x-signature': sign(hmacSecret) }, { 'x-signature': sign(wrong) }],
      [
        `/webhook/audit-jwt-${run}`,
        '',
        { authorization: `Bearer ${jwt}` },
        { authorization: `Bearer ${wrong}` },
      ],
    ];
    const findings: Finding[] = [];
    for (const [path, query, right, bad] of cases) {
      const ok = await call(`${path}${query}`, right);
      expect(ok.statusCode, `${path}: ${ok.body}`).toBe(200);
      const refused = await call(query ? `${path}?${queryName}=${wrong}` : path, bad);
      expect([401, 403], `${path} (wrong secret): ${refused.body}`).toContain(refused.statusCode);
      for (const [where, text] of [
        [`${path} (right secret)`, ok.body],
        [`${path} (wrong secret)`, refused.body],
      ] as const) {
        const found = book.leaks(text);
        if (found.length > 0) findings.push({ where, secrets: found });
      }
    }
    expect(findings).toEqual([]);
    // Every delivery started an execution: their trigger items are read in the sweep below.
    await until(async () => {
      const list = (await api('GET', '/api/v1/executions?limit=250')).json() as { data: unknown[] };
      return list.data.length >= ids.executions.length + cases.length;
    }, 'the webhook executions');
  });

  // -------------------------------------------------------------------------------------------
  // Agents, game, LLM gateway, source control, backup, exports

  it("an agent's MCP server credential is sealed and never shown, also after a run that used it", async () => {
    const agent = await created('/api/agents', {
      name: 'audit agent',
      model: 'llama3.2',
      tools: [
        {
          type: 'mcp',
          name: 'mcp:shop',
          url: shop.url,
          credential: { header: 'x-mcp-token', value: UPSTREAM_TOKEN },
        },
      ],
    });
    ids.agents.push(agent.id as string);
    expectClean('POST /api/agents', JSON.stringify(agent));
    toolCallsThenText(ollama, { name: 'shop_lookup_order', arguments: { orderId: 'A-17' } });
    const turn = await api('POST', `/api/agents/${agent.id}/messages`, { content: 'where is order A-17?' });
    expect(turn.status, turn.text).toBe(200);
    expect(shop.calls.at(-1)?.token).toBe(UPSTREAM_TOKEN);
    expectClean('an agent turn that called the MCP tool', turn.text);
    expectClean('GET /api/agents/{id}', (await api('GET', `/api/agents/${agent.id}`)).text);
  });

  it("the game platform's client secret, API key and a user's tokens stay sealed and unshown", async () => {
    const { state } = await connectAccount(p, game, '4611686018400000001');
    book.add('game OAuth state', state);
    for (const token of game.issued) book.add(`game token ${token.slice(0, 6)}`, token);
    // A customer's connection, bound to the integration's user session by the hash of its secret.
    book.add("the integration's session secret (game customer flow)", SESSION_SECRET);
    await connectAccount(p, game, '4611686018400000002', 'audit-game-customer');
    for (const token of game.issued) book.add(`game token ${token.slice(0, 6)}`, token);
    const exchange = game.requests.find((r) => r.path.includes('/OAuth/Token/'));
    const verifier = new URLSearchParams(exchange?.body ?? '').get('code_verifier') ?? '';
    book.add('game OAuth PKCE code verifier', verifier);
    const memberships = await api('GET', '/game/User/GetMembershipsForCurrentUser');
    expect(memberships.status, memberships.text).toBe(200);
    expectClean('a game call with the connected account', memberships.text);
    const sent = game.apiRequests().at(-1);
    expect(sent?.headers['x-api-key']).toBe(FAKE_API_KEY);
  });

  it("the LLM gateway: the operator's provider key is neither echoed from an upstream error nor listed", async () => {
    openai.failNext(401, 1, `Incorrect API key provided: ${operatorKey}`);
    const refused = await api('POST', '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(refused.status).toBe(502);
    expectClean('a gateway call whose upstream echoed the key', refused.text);
    const ok = await api('POST', '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(ok.status, ok.text).toBe(200);
    // A model whose key is an account credential (apiKeyCredential), refused by an upstream echoing it.
    const credentialKey = book.add(
      'credential openAiApi.apiKey (gateway model key)',
      mark('gateway-model-key'),
    );
    await created('/api/v1/credentials', {
      name: 'audit gateway key',
      type: 'openAiApi',
      data: { apiKey: credentialKey },
    });
    const echoed = await api('POST', '/v1/chat/completions', {
      model: 'audit-credential-key',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(echoed.status, echoed.text).toBe(502);
    expect(JSON.stringify(echo.seen.at(-1)?.headers)).toContain(credentialKey);
    expectClean('a gateway call whose upstream echoed a credential-held key', echoed.text);
    for (const url of ['/v1/models', '/v1/llm/requests', '/api/tags'])
      expectClean(`GET ${url}`, (await api('GET', url)).text);
  });

  it("source control: a pull that fails does not show the remote's password", async () => {
    const pulled = await api('POST', '/api/v1/source-control/pull', {});
    expect(pulled.status).toBeGreaterThanOrEqual(400);
    expectClean('POST /api/v1/source-control/pull (failed)', pulled.text);
  });

  it('`platform backup` on PostgreSQL prints the database URL without its password', async () => {
    const password = book.add('DATABASE_URL password', mark('db-password'));
    const printed: string[] = [];
    const code = await backupCommand(['audit.dump'], {
      config: parseConfig({
        DATABASE_URL: `postgres://audit:${password}@127.0.0.1:5432/audit`,
        DATA_DIR: ':memory:',
      }),
      print: (line) => printed.push(line),
    });
    expect(code).toBe(2);
    expect(printed.join('\n')).toContain('pg_dump');
    expectClean('`platform backup` (PostgreSQL advice)', printed.join('\n'));
  });

  it('workflow exports (CLI and API) and the security audit name credentials, never their secrets', async () => {
    const workflows = p.ctx.apis.workflows;
    if (!workflows) throw new Error('workflows module missing');
    const printed: string[] = [];
    expect(
      await workflowsCommand(workflows, p.accountId, ['export', '--all'], (line) => printed.push(line)),
    ).toBe(0);
    expect(printed.join('\n')).toContain('audit webhook');
    expectClean('`platform workflows export --all`', printed.join('\n'));
    const report = await api('POST', '/api/v1/audit', {});
    expect(report.status, report.text).toBe(200);
    expectClean('POST /api/v1/audit', report.text);
  });

  // -------------------------------------------------------------------------------------------
  // The sweeps: answers, database, Redis, log

  it('no GET answer holds a secret: every GET route of the OpenAPI document, and each stored thing', async () => {
    const doc = await api('GET', '/openapi.json', undefined, null);
    expect(doc.status).toBe(200);
    expectClean('GET /openapi.json', doc.text);
    const paths = (doc.json() as { paths: Record<string, Record<string, unknown>> }).paths;
    const urls = Object.entries(paths)
      .filter(([path, ops]) => ops.get && !path.includes('{'))
      .map(([path]) => path);
    for (const id of ids.workflows) urls.push(`/api/v1/workflows/${id}`);
    for (const id of ids.executions) urls.push(`/api/v1/executions/${id}?includeData=true`);
    for (const id of ids.credentials.values()) urls.push(`/api/v1/credentials/${id}`);
    for (const id of ids.agents) urls.push(`/api/agents/${id}`);
    for (const id of ids.keys) urls.push(`/v1/api-keys/${id}`);
    urls.push(
      '/api/v1/executions?includeData=true&limit=250',
      '/v1/request-logs?limit=500',
      '/v1/audit-events?limit=500',
    );
    const findings: Finding[] = [];
    const silent: string[] = [];
    for (const url of urls) {
      const res = await Promise.race([
        p.request({ method: 'GET', url }),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000).unref()),
      ]);
      if (!res) {
        silent.push(url);
        continue;
      }
      const found = book.leaks(res.body);
      if (found.length > 0) findings.push({ where: `GET ${url} (${res.statusCode})`, secrets: found });
    }
    expect(urls.length).toBeGreaterThan(40);
    expect(findings).toEqual([]);
  });

  it('no table holds a secret in clear: every row of every table, read directly', async () => {
    // Batched logs are written first.
    await api('GET', '/v1/request-logs?limit=1');
    await api('GET', '/v1/llm/requests?limit=1');
    const db = p.ctx.db;
    const tables =
      dialect === 'sqlite'
        ? (
            await sql<{
              name: string;
            }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
              db,
            )
          ).rows.map((r) => r.name)
        : (
            await sql<{ name: string }>`select table_name as name from information_schema.tables
              where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(
              db,
            )
          ).rows.map((r) => r.name);
    expect(tables).toEqual(
      expect.arrayContaining(['api_keys', 'credentials', 'executions', 'members', 'sessions']),
    );
    const findings: Finding[] = [];
    let rowsRead = 0;
    for (const table of tables) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
      for (const row of rows) {
        rowsRead++;
        for (const [column, value] of Object.entries(row)) {
          const found = book.leaks(asText(value));
          if (found.length > 0) findings.push({ where: `${table}.${column}`, secrets: found });
        }
      }
    }
    expect(rowsRead).toBeGreaterThan(50);
    expect(merge(findings)).toEqual([]);
  });

  it.runIf(withRedis)('no Redis key of the platform holds a secret in clear', async () => {
    const redis = testRedis();
    const findings: Finding[] = [];
    try {
      for (const prefix of bed.redisPrefixes) {
        const keys = await redis.keys(`${prefix}*`);
        for (const key of keys) {
          const type = await redis.type(key);
          let text = '';
          if (type === 'string') text = (await redis.getBuffer(key))?.toString('latin1') ?? '';
          else if (type === 'hash') text = JSON.stringify(await redis.hgetall(key));
          else if (type === 'list') text = JSON.stringify(await redis.lrange(key, 0, -1));
          else if (type === 'set') text = JSON.stringify(await redis.smembers(key));
          else if (type === 'zset') text = JSON.stringify(await redis.zrange(key, 0, -1));
          else if (type === 'stream') text = JSON.stringify(await redis.xrange(key, '-', '+'));
          const found = book.leaks(text);
          if (found.length > 0)
            findings.push({ where: `redis ${key.replace(prefix, '<prefix>')}`, secrets: found });
        }
      }
    } finally {
      redis.disconnect();
    }
    expect(merge(findings)).toEqual([]);
  });

  it("the server's log holds no secret", async () => {
    await new Promise<void>((resolve) =>
      (p.app.log as unknown as { flush(cb: () => void): void }).flush(() => resolve()),
    );
    const lines = logLines.slice(firstLog.index);
    expect(lines.length).toBeGreaterThan(20);
    const findings: Finding[] = [];
    for (const line of lines) {
      const found = book.leaks(line);
      if (found.length > 0) findings.push({ where: `log: ${line.slice(0, 300)}`, secrets: found });
    }
    expect(findings).toEqual([]);
  });
});

/** A column's value as text (blobs byte for byte). */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('latin1');
  if (typeof value === 'object')
    return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  return String(value);
}

/** Findings by place, each secret once. */
function merge(findings: Finding[]): Finding[] {
  const by = new Map<string, Set<string>>();
  for (const f of findings) {
    const set = by.get(f.where) ?? new Set<string>();
    for (const s of f.secrets) set.add(s);
    by.set(f.where, set);
  }
  return [...by].map(([where, secrets]) => ({ where, secrets: [...secrets].sort() }));
}

/** The tokens the fake OAuth2 provider has issued (its own bookkeeping). */
function issuedOAuthTokens(provider: FakeOAuth2): string[] {
  const own = provider as unknown as { access: Set<string>; refresh: Set<string> };
  return [...own.access, ...own.refresh];
}
