import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../../helpers/platform.js';
import { testDialects } from '../../helpers/services.js';
import { type AllFakes, type FakeServer, startAllFakes } from '../support/fakes/index.js';
import { activate, createCredential, settled, workflowPlatform } from '../support.js';
import { CREDENTIALS, TOKENS } from './harness.js';

const NAMES = [
  'workspace-to-docs',
  'store-order-processing',
  'user-registration',
  'llm-completion-processor',
  'flow-builder-flow-trigger',
  'document-processing',
];

describe.each(await testDialects())('the six named workflows on %s', (dialect) => {
  let p: TestPlatform;
  let fakes: AllFakes;
  const id = (slug: string) => `wf_${slug.replaceAll('-', '_')}`;

  beforeAll(async () => {
    fakes = await startAllFakes(TOKENS);
    p = await workflowPlatform(dialect, {
      WORKFLOWS_DIR: 'workflows',
      ...fakes.env,
      // The downstream settings' hosts are trusted by the service; the callback fake is one more.
      OUTBOUND_ALLOW_HOSTS: new URL(fakes.callback.url).host,
    });
  });
  afterAll(async () => {
    await p.close();
    await fakes.close();
  });

  const post = (path: string, payload: unknown, headers: Record<string, string> = {}) =>
    p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload: payload as object, headers });
  const lastTo = (fake: FakeServer, path: string) =>
    [...fake.received].reverse().find((r) => r.path.startsWith(path));
  const fieldsOf = (res: { json(): unknown }) =>
    (res.json() as { details: { fields: Array<{ field: string }> } }).details.fields
      .map((f) => f.field)
      .sort();

  it('are imported inactive on first start, once, and are valid', async () => {
    const api = p.ctx.apis.workflows;
    const imported = await api?.importShipped(p.accountId);
    expect(imported?.sort()).toEqual(NAMES.map(id).sort());
    expect(await api?.importShipped(p.accountId)).toEqual([]);
    for (const slug of NAMES) {
      const res = await p.request({ method: 'GET', url: `/api/v1/workflows/${id(slug)}` });
      expect(res.statusCode, slug).toBe(200);
      expect(res.json()).toMatchObject({ name: slug, active: false });
    }
  });

  it("hold only n8n's node types and the platform's prefixed ones, stored as shipped", async () => {
    for (const slug of NAMES) {
      const file = JSON.parse(await readFile(path.join('workflows', `${slug}.json`), 'utf8')) as {
        nodes: Array<{ type: string; typeVersion: number }>;
      };
      const res = await p.request({ method: 'GET', url: `/api/v1/workflows/${id(slug)}` });
      const stored = (res.json() as { nodes: Array<{ type: string; typeVersion: number }> }).nodes;
      for (const node of [...file.nodes, ...stored]) {
        expect(node.type, slug).toMatch(/^n8n-nodes-(base|platform)\./);
        expect(typeof node.typeVersion, slug).toBe('number');
      }
      expect(stored.map((n) => n.type)).toEqual(file.nodes.map((n) => n.type));
    }
  });

  it('stay inactive until their credentials exist', async () => {
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id('store-order-processing')}/activate`,
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(/store-order-processing-hmac/);
  });

  it('activate once their credentials are set', async () => {
    const types: Record<string, string> = {
      'workspace-to-docs-webhook-key': 'httpHeaderAuth',
      'store-order-processing-hmac': 'hmacSecret',
    };
    for (const [name, data] of Object.entries(CREDENTIALS)) {
      await createCredential(p, name, types[name] ?? 'httpBearerAuth', data);
    }
    for (const slug of NAMES) await activate(p, id(slug));
  });

  describe('workspace-to-docs', () => {
    const body = { pageId: 'page-123', destination: 'guides/release-notes' };
    const key = { 'x-webhook-key': 'wh-key-1' };
    it('needs X-Webhook-Key: missing → 401, wrong → 403', async () => {
      expect((await post('workspace-to-docs', body)).statusCode).toBe(401);
      expect((await post('workspace-to-docs', body, { 'x-webhook-key': 'nope' })).statusCode).toBe(403);
    });

    it('reads the page and its blocks, converts them to Markdown and publishes them', async () => {
      const res = await post('workspace-to-docs', body, key);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        synced: true,
        pageId: 'page-123',
        destination: 'guides/release-notes',
        title: 'Release notes',
        blocks: 5,
        url: 'https://docs.example.com/guides/release-notes',
        version: 1,
        knowledge: { documentId: 'doc-loaded-1', topic: 'guides', status: 'indexed', chunks: 15 },
      });
      expect(lastTo(fakes.docproc, '/api/documents/load')?.body).toMatchObject({
        source: 'markdown',
        topic: 'guides',
      });
      const page = lastTo(fakes.workspace, '/v1/pages/page-123');
      expect(page?.headers.authorization).toBe('Bearer secret_workspace');
      expect(page?.headers['notion-version']).toBe('2022-06-28');
      expect(lastTo(fakes.workspace, '/v1/blocks/page-123/children')?.query).toEqual({ page_size: '100' });
      const published = lastTo(fakes.docs, '/api/docs/pages');
      expect(published?.method).toBe('PUT');
      expect(published?.headers.authorization).toBe('Bearer docs-token');
      const doc = published?.body as { path: string; title: string; markdown: string };
      expect(doc.path).toBe('guides/release-notes');
      expect(doc.title).toBe('Release notes');
      expect(doc.markdown).toContain('# Release notes');
      expect(doc.markdown).toContain('Faster **webhooks**.');
      expect(doc.markdown).toContain('- HMAC signatures');
      expect(doc.markdown).toContain('- [See the docs](https://docs.example.com)');
      expect(doc.markdown).toContain('```bash');
    });

    it('the same Idempotency-Key twice → the first answer, one publication', async () => {
      const headers = { ...key, 'idempotency-key': 'sync-1' };
      const first = await post('workspace-to-docs', body, headers);
      const count = fakes.docs.received.length;
      const again = await post('workspace-to-docs', body, headers);
      expect(again.json()).toEqual(first.json());
      expect(fakes.docs.received.length).toBe(count);
    });

    it('400 listing bad fields; 502 naming the node when the workspace fails', async () => {
      const bad = await post('workspace-to-docs', { pageId: 5 }, key);
      expect(bad.statusCode).toBe(400);
      expect(fieldsOf(bad)).toEqual(['body.destination', 'body.pageId']);
      fakes.workspace.failNext('/v1/blocks', 500);
      const down = await post('workspace-to-docs', body, key);
      expect(down.statusCode).toBe(502);
      expect(down.json()).toMatchObject({ code: 'UPSTREAM_ERROR', details: { node: 'Get blocks' } });
    });
  });

  describe('store-order-processing', () => {
    const order = {
      id: 'shop-1001',
      customer: { id: 'cust-7', email: 'ann@example.com' },
      line_items: [{ product_id: 'prod_candle', variant_id: 'var_8oz', quantity: 1, price: '24.00' }],
    };
    const raw = JSON.stringify(order);
    const sign = (b: string, secret = 'store-signing-secret') =>
      createHmac('sha256', secret).update(b).digest('base64');
    const send = (b: string, signature?: string) =>
      p.app.inject({
        method: 'POST',
        url: '/webhook/store-order-processing',
        payload: b,
        headers: {
          'content-type': 'application/json',
          ...(signature ? { 'x-store-hmac-sha256': signature } : {}),
        },
      });
    const intakes = () => fakes.orders.received.filter((r) => r.path === '/v1/orders').length;

    it('a bad or missing signature → 401/403 and no order', async () => {
      const before = intakes();
      expect((await send(raw)).statusCode).toBe(401);
      expect((await send(raw, sign(raw, 'wrong'))).statusCode).toBe(403);
      expect(intakes()).toBe(before);
    });

    it('a signed order is passed to the order intake; the same delivery twice → one order', async () => {
      const res = await send(raw, sign(raw));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        received: true,
        orderId: 'shop-1001',
        platformOrderId: 'ord_0001',
        status: 'received',
      });
      const intake = lastTo(fakes.orders, '/v1/orders');
      expect(intake?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
      expect(intake?.headers['idempotency-key']).toBe('store-order-shop-1001');
      expect(intake?.body).toEqual(order);
      const count = intakes();
      const again = await send(raw, sign(raw));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(res.json());
      expect(intakes()).toBe(count);
    });

    it('an order missing fields → 400 listing them', async () => {
      const b = JSON.stringify({ id: 'shop-1002', line_items: 'none' });
      const res = await send(b, sign(b));
      expect(res.statusCode).toBe(400);
      expect(fieldsOf(res)).toEqual(['body.customer', 'body.line_items']);
    });
  });

  describe('user-registration', () => {
    it('needs a platform key with the workflow service in X-API-Key', async () => {
      const body = { userId: 'u1', email: 'u1@example.com', name: 'U One', registrationSource: 'web' };
      expect((await post('user-registration', body)).statusCode).toBe(401);
      const res = await post('user-registration', body, { 'x-api-key': p.adminKey });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ onboarded: true, userId: 'u1', profile: { id: 'usr_0001' } });
      const call = lastTo(fakes.users, '/api/users');
      expect(call?.body).toMatchObject({ ...body, onboarding: { status: 'started' } });
      expect(call?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
      expect(call?.headers['x-api-key']).toBeUndefined();
    });

    it('400 for a bad email and a missing name', async () => {
      const res = await post(
        'user-registration',
        { userId: 'u2', email: 'not-an-email', registrationSource: 'web' },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode).toBe(400);
      expect(fieldsOf(res)).toEqual(['body.email', 'body.name']);
    });
  });

  describe('llm-completion-processor', () => {
    const base = { completionId: 'cmp-1', model: 'llama3.1', result: '## Summary\nAll good.' };
    const route = (over: Record<string, string>) =>
      post('llm-completion-processor', { ...base, ...over }, { 'x-api-key': p.adminKey });

    it('routes docs:<path> to the docs target', async () => {
      const res = await route({ destination: 'docs:ai/summaries/cmp-1' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ routed: true, completionId: 'cmp-1', target: 'docs' });
      expect(lastTo(fakes.docs, '/api/docs/pages')?.body).toMatchObject({
        path: 'ai/summaries/cmp-1',
        markdown: base.result,
        source: { kind: 'llm', model: 'llama3.1', completionId: 'cmp-1' },
      });
    });

    it('routes flow:<flowId> to the flow builder and llm:<model> to the language model', async () => {
      const flow = await route({ completionId: 'cmp-5', destination: 'flow:reviewer' });
      expect(flow.statusCode, flow.body).toBe(200);
      expect(flow.json()).toMatchObject({ target: 'flow', answer: `Answer to: ${base.result}` });
      expect(lastTo(fakes.flow, '/api/v1/prediction/reviewer')?.headers.authorization).toBe(
        'Bearer flow-token',
      );
      const llm = await route({ completionId: 'cmp-6', destination: 'llm:mistral' });
      expect(llm.statusCode, llm.body).toBe(200);
      expect(llm.json()).toMatchObject({ target: 'llm', model: 'mistral', answer: `Echo: ${base.result}` });
      expect(lastTo(fakes.llm, '/api/chat')?.headers.authorization).toBe('Bearer llm-token');
    });

    it('posts to a callback URL (through the outbound guard)', async () => {
      const res = await route({ completionId: 'cmp-2', destination: `${fakes.callback.url}/callback` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ target: 'callback', callbackStatus: 200 });
      expect(lastTo(fakes.callback, '/callback')?.body).toEqual({
        completionId: 'cmp-2',
        model: 'llama3.1',
        result: base.result,
      });
      const internal = await route({ completionId: 'cmp-3', destination: 'http://169.254.169.254/latest' });
      expect(internal.statusCode).toBe(502);
      expect(internal.json()).toMatchObject({ details: { node: 'To callback' } });
    });

    it('an unknown destination → 422 naming the node', async () => {
      const res = await route({ completionId: 'cmp-4', destination: 'ftp:nowhere' });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ details: { node: 'Unknown destination' } });
    });
  });

  describe('flow-builder-flow-trigger', () => {
    it('asks the flow and answers with its text', async () => {
      const res = await post(
        'flow-builder-flow-trigger',
        { flowId: 'flow-42', input: { question: 'What is new?', context: 'release 2' } },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        flowId: 'flow-42',
        answer: 'Answer to: What is new?',
        chatId: expect.any(String),
        chatMessageId: expect.any(String),
      });
      const call = lastTo(fakes.flow, '/api/v1/prediction/flow-42');
      expect(call?.headers.authorization).toBe('Bearer flow-token');
      expect(call?.body).toEqual({
        question: 'What is new?',
        overrideConfig: { vars: { context: 'release 2' } },
      });
    });

    it('400 when input.question is missing or of the wrong type', async () => {
      const res = await post(
        'flow-builder-flow-trigger',
        { flowId: 'f', input: { question: 3 } },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode).toBe(400);
      expect(fieldsOf(res)).toEqual(['body.input.question']);
    });
  });

  describe('document-processing', () => {
    type Started = { accepted: boolean; executionId: string };
    it('answers 202 once the body is valid; the execution goes on to load, chunk, embed and index', async () => {
      const body = {
        documentId: 'doc-9',
        operations: ['chunk', 'embed', 'index'],
        chunkSize: 800,
        embeddingModel: 'nomic-embed-text',
      };
      const res = await post('document-processing', body, { 'x-api-key': p.adminKey });
      expect(res.statusCode, res.body).toBe(202);
      const started = res.json() as Started;
      expect(started).toMatchObject({ accepted: true, documentId: 'doc-9', operations: body.operations });
      const exe = await settled(p, started.executionId);
      expect(exe).toMatchObject({ status: 'success', workflowId: id('document-processing') });
      const calls = fakes.docproc.received.slice(-3);
      expect(calls.map((r) => r.path)).toEqual(Array(3).fill('/api/documents/doc-9/process'));
      expect(calls.map((r) => (r.body as { operations: string[] }).operations)).toEqual([
        ['chunk'],
        ['embed'],
        ['index'],
      ]);
      expect(lastTo(fakes.docproc, '/api/documents/doc-9/process')?.headers.authorization).toBe(
        'Bearer docproc-token',
      );
    });

    it('an unknown operation and a non-integer chunk size → 400 listing them', async () => {
      const res = await post(
        'document-processing',
        { documentId: 'doc-9', operations: ['chunk', 'shred'], chunkSize: 1.5, embeddingModel: 'm' },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode).toBe(400);
      const err = res.json() as {
        code: string;
        details: { fields: Array<{ field: string }>; executionId: string };
      };
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details.fields.map((x) => x.field).sort()).toEqual(['body.chunkSize', 'body.operations']);
      expect((await settled(p, err.details.executionId)).status).toBe('error');
    });
  });
});
