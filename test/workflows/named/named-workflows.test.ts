import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../../helpers/platform.js';
import { testDialects } from '../../helpers/services.js';
import { activate, createCredential, workflowPlatform } from '../support.js';
import { type FakeDownstreams, startFakeDownstreams } from './fake-downstreams.js';

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
  let fake: FakeDownstreams;
  const id = (slug: string) => `wf_${slug.replaceAll('-', '_')}`;

  beforeAll(async () => {
    fake = await startFakeDownstreams();
    p = await workflowPlatform(dialect, {
      WORKFLOWS_DIR: 'workflows',
      WORKSPACE_API_URL: `${fake.url}/v1`,
      DOCS_API_URL: fake.url,
      ORDERS_URL: fake.url,
      USERS_URL: fake.url,
      FLOW_URL: fake.url,
      DOCPROC_URL: fake.url,
      LLM_URL: fake.url,
      OUTBOUND_ALLOW_HOSTS: '',
    });
  });
  afterAll(async () => {
    await p.close();
    await fake.close();
  });

  const post = (path: string, payload: unknown, headers: Record<string, string> = {}) =>
    p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload: payload as object, headers });
  const lastTo = (path: string) => [...fake.received].reverse().find((r) => r.path.startsWith(path));

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

  it('stay inactive until their credentials exist', async () => {
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id('store-order-processing')}/activate`,
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(/store-order-processing-hmac/);
  });

  it('activate once their credentials are set', async () => {
    await createCredential(p, 'workspace-to-docs-webhook-key', 'httpHeaderAuth', {
      name: 'X-Webhook-Key',
      value: 'wh-key-1',
    });
    await createCredential(p, 'store-order-processing-hmac', 'hmacSecret', {
      secret: 'store-signing-secret',
    });
    await createCredential(p, 'workspace-api-token', 'httpBearerAuth', { token: 'secret_workspace' });
    await createCredential(p, 'docs-api-token', 'httpBearerAuth', { token: 'docs-token' });
    await createCredential(p, 'platform-api-key', 'httpBearerAuth', { token: 'PROD_API_for_the_platform' });
    await createCredential(p, 'flow-api-key', 'httpBearerAuth', { token: 'flow-token' });
    await createCredential(p, 'docproc-api-key', 'httpBearerAuth', { token: 'docproc-token' });
    for (const slug of NAMES) await activate(p, id(slug));
  });

  describe('workspace-to-docs', () => {
    const body = { pageId: 'page-123', destination: 'guides/release-notes' };
    it('needs X-Webhook-Key: missing → 401, wrong → 403', async () => {
      expect((await post('workspace-to-docs', body)).statusCode).toBe(401);
      expect((await post('workspace-to-docs', body, { 'x-webhook-key': 'nope' })).statusCode).toBe(403);
    });

    it('reads the page and its blocks, converts them to Markdown and publishes them', async () => {
      const res = await post('workspace-to-docs', body, { 'x-webhook-key': 'wh-key-1' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        synced: true,
        pageId: 'page-123',
        destination: 'guides/release-notes',
        title: 'Release notes',
        blocks: 4,
      });
      const page = lastTo('/v1/pages/page-123');
      expect(page?.headers.authorization).toBe('Bearer secret_workspace');
      expect(page?.headers['notion-version']).toBe('2022-06-28');
      expect(lastTo('/v1/blocks/page-123/children')?.path).toContain('page_size=100');
      const published = lastTo('/api/docs/pages');
      expect(published?.method).toBe('PUT');
      expect(published?.headers.authorization).toBe('Bearer docs-token');
      const doc = published?.body as { path: string; title: string; markdown: string };
      expect(doc.path).toBe('guides/release-notes');
      expect(doc.title).toBe('Release notes');
      expect(doc.markdown).toContain('# Release notes');
      expect(doc.markdown).toContain('Faster **webhooks**.');
      expect(doc.markdown).toContain('- HMAC signatures');
      expect(doc.markdown).toContain('```bash');
    });

    it('400 listing bad fields; 502 naming the node when the workspace fails', async () => {
      const bad = await post('workspace-to-docs', { pageId: 5 }, { 'x-webhook-key': 'wh-key-1' });
      expect(bad.statusCode).toBe(400);
      const fields = (bad.json() as { details: { fields: Array<{ field: string }> } }).details.fields.map(
        (f) => f.field,
      );
      expect(fields.sort()).toEqual(['body.destination', 'body.pageId']);
      fake.failNext('/v1/blocks', 500);
      const down = await post('workspace-to-docs', body, { 'x-webhook-key': 'wh-key-1' });
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

    it('a bad or missing signature → 401/403 and no order', async () => {
      const before = fake.received.filter((r) => r.path === '/v1/orders').length;
      expect((await send(raw)).statusCode).toBe(401);
      expect((await send(raw, sign(raw, 'wrong'))).statusCode).toBe(403);
      expect(fake.received.filter((r) => r.path === '/v1/orders').length).toBe(before);
    });

    it('a signed order is passed to the order intake; the same delivery twice → one order', async () => {
      const res = await send(raw, sign(raw));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ received: true, orderId: 'shop-1001', platformOrderId: 'ord_01' });
      const intake = lastTo('/v1/orders');
      expect(intake?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
      expect(intake?.body).toEqual(order);
      const count = fake.received.filter((r) => r.path === '/v1/orders').length;
      const again = await send(raw, sign(raw));
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(res.json());
      expect(fake.received.filter((r) => r.path === '/v1/orders').length).toBe(count);
    });

    it('an order missing fields → 400 listing them', async () => {
      const b = JSON.stringify({ id: 'shop-1002', line_items: 'none' });
      const res = await send(b, sign(b));
      expect(res.statusCode).toBe(400);
      const fields = (res.json() as { details: { fields: Array<{ field: string }> } }).details.fields.map(
        (f) => f.field,
      );
      expect(fields.sort()).toEqual(['body.customer', 'body.line_items']);
    });
  });

  describe('user-registration', () => {
    it('needs a platform key with the workflow service in X-API-Key', async () => {
      const body = { userId: 'u1', email: 'u1@example.com', name: 'U One', registrationSource: 'web' };
      expect((await post('user-registration', body)).statusCode).toBe(401);
      const res = await post('user-registration', body, { 'x-api-key': p.adminKey });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ onboarded: true, userId: 'u1', profile: { id: 'usr_01' } });
      const call = lastTo('/api/users');
      expect(call?.body).toMatchObject({ ...body, onboarding: { status: 'started' } });
      expect(call?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
    });

    it('400 for a bad email and a missing name', async () => {
      const res = await post(
        'user-registration',
        { userId: 'u2', email: 'not-an-email', registrationSource: 'web' },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode).toBe(400);
      const fields = (res.json() as { details: { fields: Array<{ field: string }> } }).details.fields.map(
        (f) => f.field,
      );
      expect(fields.sort()).toEqual(['body.email', 'body.name']);
    });
  });

  describe('llm-completion-processor', () => {
    const base = { completionId: 'cmp-1', model: 'llama3.1', result: '## Summary\nAll good.' };
    it('routes docs:<path> to the docs target', async () => {
      const res = await post(
        'llm-completion-processor',
        { ...base, destination: 'docs:ai/summaries/cmp-1' },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ routed: true, completionId: 'cmp-1' });
      expect(lastTo('/api/docs/pages')?.body).toMatchObject({
        path: 'ai/summaries/cmp-1',
        markdown: base.result,
        source: { kind: 'llm', model: 'llama3.1', completionId: 'cmp-1' },
      });
    });

    it('posts to a callback URL (through the outbound guard)', async () => {
      const res = await post(
        'llm-completion-processor',
        { ...base, completionId: 'cmp-2', destination: `${fake.url}/callback` },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(lastTo('/callback')?.body).toEqual({
        completionId: 'cmp-2',
        model: 'llama3.1',
        result: base.result,
      });
      const internal = await post(
        'llm-completion-processor',
        { ...base, completionId: 'cmp-3', destination: 'http://169.254.169.254/latest' },
        { 'x-api-key': p.adminKey },
      );
      expect(internal.statusCode).toBe(502);
    });

    it('an unknown destination → 422 naming the node', async () => {
      const res = await post(
        'llm-completion-processor',
        { ...base, completionId: 'cmp-4', destination: 'ftp:nowhere' },
        { 'x-api-key': p.adminKey },
      );
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
      expect(res.json()).toEqual({ flowId: 'flow-42', answer: 'Answer to: What is new?', chatId: 'chat-1' });
      const call = lastTo('/api/v1/prediction/flow-42');
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
      expect(JSON.stringify(res.json())).toMatch(/body\.input\.question/);
    });
  });

  describe('document-processing', () => {
    it('loads the document with its operations', async () => {
      const body = {
        documentId: 'doc-9',
        operations: ['chunk', 'embed', 'index'],
        chunkSize: 800,
        embeddingModel: 'nomic-embed-text',
      };
      const res = await post('document-processing', body, { 'x-api-key': p.adminKey });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ documentId: 'doc-9', result: { status: 'processed', chunks: 12 } });
      expect(lastTo('/api/documents/load')?.body).toMatchObject({
        source: 'document',
        url: 'doc-9',
        ...body,
      });
      expect(lastTo('/api/documents/load')?.headers.authorization).toBe('Bearer docproc-token');
    });

    it('400 for an unknown operation and a non-integer chunk size', async () => {
      const res = await post(
        'document-processing',
        { documentId: 'doc-9', operations: ['chunk', 'shred'], chunkSize: 1.5, embeddingModel: 'm' },
        { 'x-api-key': p.adminKey },
      );
      expect(res.statusCode).toBe(400);
      const fields = (res.json() as { details: { fields: Array<{ field: string }> } }).details.fields.map(
        (f) => f.field,
      );
      expect(fields.sort()).toEqual(['body.chunkSize', 'body.operations']);
    });
  });
});
