import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Client } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE, schemaSource } from '../../sdk/generate.js';
import { createPlatformClient, type paths } from '../../sdk/index.js';
import { FakeGamePlatform } from '../game/fake-game-platform.js';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';

interface Operation {
  tags?: string[];
  responses?: Record<string, unknown>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
}

/** Whether a status is one the operation documents (exactly, as `4XX`-style range, or `default`). */
function documents(op: Operation, status: number): boolean {
  const listed = Object.keys(op.responses ?? {});
  return (
    listed.includes(String(status)) || listed.includes(`${String(status)[0]}XX`) || listed.includes('default')
  );
}

/**
 * The generated client against a real server: sdk/schema.d.ts must be what the served document
 * generates, and every tag of that document must have an operation that works through the client,
 * answering a status the document lists. A call through the client is typed by the generated
 * `paths`, so a path, parameter or body the document gets wrong fails the typecheck or the call.
 * SQLite only: this is the HTTP contract; each module's own suites run on both databases.
 */
describe('generated TypeScript client (sdk/)', () => {
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  let doc: Document;
  let baseUrl: string;
  let api: Client<paths>;
  /** `METHOD /schema/path` of each call the clients made, with the status it got. */
  const calls: Array<{ operation: string; status: number }> = [];

  const client = (token?: string): Client<paths> => {
    const c = createPlatformClient({ baseUrl, ...(token ? { token } : {}) });
    c.use({
      onResponse({ request, schemaPath, response }) {
        calls.push({ operation: `${request.method} ${schemaPath}`, status: response.status });
      },
    });
    return c;
  };

  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await listeningPlatform('sqlite', fake.env());
    baseUrl = p.ctx.config.PUBLIC_URL;
    // Served, not built here: the client must match what a user downloads.
    doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Document;
    api = client(p.adminKey);
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('is generated from the served document (run `npm run sdk` after changing a route)', async () => {
    const committed = readFileSync(SCHEMA_FILE, 'utf8').split('\n');
    const fresh = (await schemaSource(doc)).split('\n');
    // The first differing line, not a 10,000-line diff.
    const at = fresh.findIndex((line, i) => line !== committed[i]);
    const first =
      at === -1 && fresh.length !== committed.length ? Math.min(fresh.length, committed.length) : at;
    expect(
      first === -1 ? null : { line: first + 1, committed: committed[first], generated: fresh[first] },
      `${SCHEMA_FILE} is stale: run npm run sdk`,
    ).toBeNull();
  });

  it('core: health, keys, usage and a customer token', async () => {
    const health = await client().GET('/health');
    expect(health.response.status).toBe(200);

    const created = await api.POST('/v1/api-keys', {
      body: { name: 'sdk reader', type: 'production', services: ['commerce'], role: 'Reader' },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const keyId = created.data?.id ?? '';
    const listed = await api.GET('/v1/api-keys', { params: { query: { limit: 50 } } });
    expect(listed.data?.data.map((k) => k.id)).toContain(keyId);
    const one = await api.GET('/v1/api-keys/{id}', { params: { path: { id: keyId } } });
    expect(one.data?.name).toBe('sdk reader');
    // Errors are typed too: the one Error schema, `code` from its closed list.
    const missing = await api.GET('/v1/api-keys/{id}', { params: { path: { id: `${keyId}x` } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.code).toBe('API_KEY_NOT_FOUND');

    const usage = await api.GET('/v1/usage');
    expect(usage.response.status).toBe(200);

    const token = await api.POST('/v1/auth/tokens', {
      body: { customerId: 'sdk_customer', scopes: ['commerce:read', 'commerce:write'], ttlSeconds: 600 },
    });
    expect(token.response.status, JSON.stringify(token.error)).toBe(201);
    expect(token.data?.tokenType).toBe('Bearer');

    // The request log and the audit trail: the key's creation above is in both.
    const events = await api.GET('/v1/audit-events', { params: { query: { targetId: keyId } } });
    expect(events.data?.data.map((e) => e.action)).toEqual(['key.created']);
    const logged = await api.GET('/v1/request-logs', { params: { query: { method: 'POST', limit: 5 } } });
    expect(logged.response.status).toBe(200);
    expect(logged.data?.data.map((r) => r.path)).toContain('/v1/api-keys');
  });

  it('commerce: products, blends, a customer cart, discounts and orders', async () => {
    const products = await api.GET('/v1/products');
    expect(products.response.status).toBe(200);
    expect(products.data?.data.length).toBeGreaterThan(0);

    const categories = await api.GET('/api/custom-blends/categories');
    expect(categories.response.status).toBe(200);

    const token = await api.POST('/v1/auth/tokens', {
      body: { customerId: 'sdk_shopper', scopes: ['commerce:read', 'commerce:write'] },
    });
    const shopper = client(token.data?.token);
    const cart = await shopper.GET('/api/cart');
    expect(cart.response.status, JSON.stringify(cart.error)).toBe(200);
    expect(cart.data?.customerId).toBe('sdk_shopper');

    const discounts = await api.GET('/v1/discounts');
    expect(discounts.response.status).toBe(200);
    const orders = await api.GET('/v1/orders');
    expect(orders.response.status).toBe(200);
  });

  it('game platform: a manifest through the upstream, and the OAuth link', async () => {
    const manifest = await api.GET('/game/{game}/Manifest', { params: { path: { game: 'Destiny2' } } });
    expect(manifest.response.status, JSON.stringify(manifest.error)).toBe(200);

    const link = await api.GET('/game/oauth/authorize', {
      params: {
        query: {
          customerId: 'sdk_player',
          sessionBinding: createHash('sha256').update('shop session secret').digest('hex'),
          returnUrl: 'https://shop.example/game/return',
        },
      },
    });
    expect(link.response.status, JSON.stringify(link.error)).toBe(200);
    expect(link.data?.authorizeUrl.startsWith(baseUrl)).toBe(true);
  });

  it('workflows: create and activate one with a webhook, call it, read the execution', async () => {
    const created = await api.POST('/api/v1/workflows', {
      body: {
        name: 'sdk echo',
        nodes: [
          {
            name: 'Webhook',
            type: 'webhook',
            position: [0, 0],
            parameters: { path: 'sdk-echo', httpMethod: 'POST', responseMode: 'lastNode' },
          },
          {
            name: 'Set',
            type: 'set',
            position: [200, 0],
            parameters: { values: { echoed: '={{ $json.body.message }}' } },
          },
        ],
        connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
      },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const id = created.data?.id ?? '';
    const activated = await api.POST('/api/v1/workflows/{id}/activate', {
      params: { path: { id } },
      body: {},
    });
    expect(activated.data?.active).toBe(true);

    // Public: no key. The path parameter must survive the client's URL building.
    const hook = await client().POST('/webhook/{path}', {
      params: { path: { path: 'sdk-echo' } },
      body: { message: 'through the sdk' },
    });
    expect(hook.response.status, JSON.stringify(hook.error)).toBe(200);
    expect(hook.data).toMatchObject({ echoed: 'through the sdk' });

    const executions = await api.GET('/api/v1/executions', { params: { query: { workflowId: id } } });
    expect(executions.data?.data.map((e) => e.workflowId)).toEqual([id]);

    const credentials = await api.GET('/api/v1/credentials');
    expect(credentials.response.status).toBe(200);

    // The node catalogue and one type's parameter schema (the portal's node forms read these).
    const nodeTypes = await api.GET('/api/v1/node-types');
    expect(nodeTypes.data?.types.some((t) => t.type === 'n8n-nodes-base.set')).toBe(true);
    const setSchema = await api.GET('/api/v1/node-types/schema', {
      params: { query: { type: 'n8n-nodes-base.set', version: 3.4 } },
    });
    expect(setSchema.response.status, JSON.stringify(setSchema.error)).toBe(200);

    // No repository is configured here: the pull says so in the documented 400.
    const pull = await api.POST('/api/v1/source-control/pull', { body: {} });
    expect(pull.response.status).toBe(400);
    expect(JSON.stringify(pull.error)).toContain('SOURCE_CONTROL_REPO_URL');

    const audit = await api.POST('/api/v1/audit', {
      body: { additionalOptions: { categories: ['instance'] } },
    });
    expect(audit.response.status, JSON.stringify(audit.error)).toBe(200);
    expect(audit.data).toHaveProperty(['Instance Risk Report', 'risk'], 'instance');

    const users = await api.GET('/api/v1/users', { params: { query: { includeRole: true } } });
    expect(users.response.status, JSON.stringify(users.error)).toBe(200);
    const projects = await api.GET('/api/v1/projects');
    expect(projects.data?.data[0]).toEqual({ id: 'account', name: 'Account', type: 'team' });
  });

  it('language models: the Ollama and OpenAI surfaces and the request log', async () => {
    const version = await api.GET('/api/version');
    expect(version.response.status).toBe(200);
    expect(typeof version.data?.version).toBe('string');
    const models = await api.GET('/v1/models');
    expect(models.response.status).toBe(200);
    expect(models.data?.object).toBe('list');
    const log = await api.GET('/v1/llm/requests');
    expect(log.response.status).toBe(200);
    // Anthropic's dialect: a token count through the generated client.
    const counted = await api.POST('/v1/messages/count_tokens', {
      headers: { 'anthropic-version': '2023-06-01' },
      body: { model: 'builtin/extractive', messages: [{ role: 'user', content: 'count these words' }] },
    });
    expect(counted.response.status, JSON.stringify(counted.error)).toBe(200);
    expect(counted.data?.input_tokens).toBeGreaterThan(0);
  });

  it('MCP: a JSON-RPC ping through the generated client', async () => {
    const pong = await api.POST('/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
    expect(pong.response.status, JSON.stringify(pong.error)).toBe(200);
    expect(pong.data).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('documents, the knowledge base, flows, agents and user profiles', async () => {
    const docs = await api.GET('/api/documents');
    expect(docs.response.status).toBe(200);
    const topics = await api.GET('/api/knowledge/topics');
    expect(topics.response.status).toBe(200);
    const flows = await api.GET('/api/v1/chatflows');
    expect(flows.response.status).toBe(200);
    const agents = await api.GET('/api/agents');
    expect(agents.response.status).toBe(200);

    const user = await api.POST('/api/users', {
      body: { userId: 'sdk-user', email: 'sdk@example.com', name: 'Sdk User', registrationSource: 'sdk' },
    });
    expect(user.response.status, JSON.stringify(user.error)).toBe(201);
    const profile = await api.GET('/api/users/{userId}/profile', {
      params: { path: { userId: 'sdk-user' } },
    });
    expect(profile.response.status).toBe(200);
  });

  // Last: it reads what the tests above called.
  it('portal: members and sessions', async () => {
    const members = await api.GET('/v1/members');
    expect(members.response.status).toBe(200);
    const invite = await api.POST('/v1/members/invites', {
      body: { email: 'sdk-member@example.com', role: 'viewer' },
    });
    expect(invite.response.status, JSON.stringify(invite.error)).toBe(201);
    const token = invite.data?.inviteUrl.split('token=')[1] ?? '';
    const password = 'sdk member passphrase 31';
    const accepted = await client().POST('/v1/auth/invites/accept', {
      body: { token, name: 'SDK', password },
    });
    expect(accepted.response.status, JSON.stringify(accepted.error)).toBe(200);
    const login = await client().POST('/v1/auth/login', {
      body: { email: 'sdk-member@example.com', password },
    });
    expect(login.response.status, JSON.stringify(login.error)).toBe(200);
    expect(login.data?.member.role).toBe('viewer');
  });

  it('portal: the page itself', async () => {
    const page = await client().GET('/portal', { parseAs: 'text' });
    expect(page.response.status).toBe(200);
    expect(page.data).toContain('<div id="app">');
  });

  it('called an operation of every tag, each answering a status its operation documents', () => {
    const tagsOf = new Map<string, string[]>();
    const all = new Set<string>();
    for (const section of [doc.paths, doc.webhooks ?? {}]) {
      for (const [path, item] of Object.entries(section)) {
        for (const [method, op] of Object.entries(item)) {
          tagsOf.set(`${method.toUpperCase()} ${path}`, op.tags ?? []);
          for (const tag of op.tags ?? []) all.add(tag);
        }
      }
    }
    expect(all.size).toBeGreaterThan(10);
    const covered = new Set(calls.flatMap((c) => tagsOf.get(c.operation) ?? []));
    expect([...all].filter((t) => !covered.has(t))).toEqual([]);

    const undocumented = calls.filter((c) => {
      const [method = '', path = ''] = c.operation.split(' ');
      const op = doc.paths[path]?.[method.toLowerCase()];
      return !op || !documents(op, c.status);
    });
    expect(undocumented).toEqual([]);
  });
});
