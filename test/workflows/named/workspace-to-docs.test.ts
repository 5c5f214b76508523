import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf } from '../../../src/modules/workflows/engine/testing.js';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import {
  type FakeDocs,
  type FakeServer,
  notionBlock,
  richText,
  startFakeDocproc,
  startFakeDocs,
  startFakeWorkspace,
} from '../support/fakes/index.js';
import {
  answerOf,
  dedupeKeyOf,
  loadWorkflow,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('workspace-to-docs', () => {
  let def: WorkflowDefinition;
  let workspace: FakeServer;
  let docs: FakeDocs;
  let docproc: FakeServer;
  let engine: WorkflowEngine;
  const bigPage = {
    title: 'Handbook',
    blocks: [
      notionBlock('heading_2', ['Chapter one']),
      ...Array.from({ length: 6 }, (_, i) => notionBlock('numbered_list_item', [`Step ${i + 1}`])),
      notionBlock('to_do', ['Read it'], { checked: true }),
      notionBlock('quote', [richText('Be kind', { italic: true })]),
      notionBlock('divider'),
    ],
  };

  beforeAll(async () => {
    def = await loadWorkflow('workspace-to-docs');
    workspace = await startFakeWorkspace({
      token: TOKENS.workspace,
      maxPageSize: 4,
      pages: {
        'page-123': {
          title: 'Release notes',
          blocks: [
            notionBlock('heading_1', ['Release notes']),
            notionBlock('paragraph', ['Faster ', richText('webhooks', { bold: true }), '.']),
            notionBlock('bulleted_list_item', ['HMAC signatures']),
          ],
        },
        'page-big': bigPage,
      },
    });
    docs = await startFakeDocs({ token: TOKENS.docs });
    docproc = await startFakeDocproc({ token: TOKENS.docproc });
    engine = new WorkflowEngine(
      namedDeps({ WORKSPACE_API_URL: workspace.url, DOCS_API_URL: docs.url, DOCPROC_URL: docproc.url }),
      defaultNodeRegistry,
    );
  });
  afterAll(async () => {
    await workspace.close();
    await docs.close();
    await docproc.close();
  });

  it('is a valid definition with an authenticated webhook at its path', () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_workspace_to_docs', name: 'workspace-to-docs' });
    const hook = engine.triggerNodes(def)[0];
    expect(hook?.parameters).toMatchObject({
      path: 'workspace-to-docs',
      httpMethod: 'POST',
      authentication: 'headerAuth',
      credential: 'workspace-to-docs-webhook-key',
    });
  });

  it('reads the page and its blocks, converts them to Markdown and publishes them', async () => {
    const before = workspace.received.length;
    const outcome = await runWebhook(engine, def, {
      pageId: 'page-123',
      destination: '/guides/release-notes/',
    });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      synced: true,
      pageId: 'page-123',
      destination: 'guides/release-notes',
      title: 'Release notes',
      blocks: 3,
      url: 'https://docs.example.com/guides/release-notes',
      version: 1,
      knowledge: { documentId: 'doc-loaded-1', topic: 'guides', status: 'indexed', chunks: 15 },
    });
    // The converted page also goes into the knowledge base, topic from the destination's first segment.
    const [load, process] = docproc.received.slice(-2);
    expect(load).toMatchObject({ method: 'POST', path: '/api/documents/load' });
    expect(load?.body).toMatchObject({
      source: 'markdown',
      title: 'Release notes',
      topic: 'guides',
      metadata: { pageId: 'page-123', destination: 'guides/release-notes' },
    });
    expect((load?.body as { content?: string } | undefined)?.content).toMatch(/^# Release notes/);
    expect(load?.headers.authorization).toBe('Bearer docproc-token');
    expect(process).toMatchObject({ path: '/api/documents/doc-loaded-1/process', query: { wait: 'true' } });

    const [page, children] = workspace.received.slice(before);
    expect(page).toMatchObject({ method: 'GET', path: '/v1/pages/page-123' });
    expect(page?.headers.authorization).toBe('Bearer secret_workspace');
    expect(page?.headers['notion-version']).toBe('2022-06-28');
    expect(children).toMatchObject({
      method: 'GET',
      path: '/v1/blocks/page-123/children',
      query: { page_size: '100' },
    });
    expect(children?.headers.authorization).toBe('Bearer secret_workspace');

    const put = docs.received.at(-1);
    expect(put).toMatchObject({ method: 'PUT', path: '/api/docs/pages' });
    expect(put?.headers.authorization).toBe('Bearer docs-token');
    expect(put?.headers['content-type']).toBe('application/json');
    expect(put?.body).toEqual({
      path: 'guides/release-notes',
      title: 'Release notes',
      markdown: '# Release notes\n\nFaster **webhooks**.\n\n- HMAC signatures',
      source: {
        kind: 'workspace',
        pageId: 'page-123',
        url: 'https://www.notion.so/Release-notes-page-123',
        lastEditedTime: '2030-01-01T10:00:00.000Z',
      },
    });
  });

  it('follows has_more/next_cursor until every block is read', async () => {
    const before = workspace.received.length;
    const outcome = await runWebhook(engine, def, { pageId: 'page-big', destination: 'handbook' });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    const calls = workspace.received.slice(before).filter((r) => r.path.endsWith('/children'));
    // 10 blocks, 4 per answer → 3 requests, each after the first with the previous next_cursor.
    expect(calls.map((c) => c.query.start_cursor)).toEqual([
      undefined,
      bigPage.blocks[4]?.id,
      bigPage.blocks[8]?.id,
    ]);
    expect(answerOf(outcome)).toMatchObject({ blocks: 10, title: 'Handbook' });
    const markdown = (docs.received.at(-1)?.body as { markdown?: string } | undefined)?.markdown;
    expect(markdown).toBe(
      [
        '## Chapter one',
        '',
        '1. Step 1\n2. Step 2\n3. Step 3\n4. Step 4\n5. Step 5\n6. Step 6\n- [x] Read it',
        '',
        '> _Be kind_',
        '',
        '---',
      ].join('\n'),
    );
    expect(jsonOf(outcome.state, 'To Markdown')[0]?.markdown).toBe(markdown);
  });

  it('stops with an error instead of publishing a truncated page past 20 requests (2,000 blocks)', async () => {
    const huge = await startFakeWorkspace({
      maxPageSize: 1,
      pages: {
        'page-huge': {
          title: 'Huge',
          blocks: Array.from({ length: 25 }, (_, i) => notionBlock('paragraph', [`p${i}`])),
        },
      },
    });
    try {
      const hugeEngine = new WorkflowEngine(
        namedDeps({ WORKSPACE_API_URL: huge.url, DOCS_API_URL: docs.url }),
        defaultNodeRegistry,
      );
      const published = docs.received.length;
      const outcome = await runWebhook(hugeEngine, def, { pageId: 'page-huge', destination: 'huge' });
      expect(outcome.status).toBe('error');
      expect(outcome.state.error?.node).toBe('Too many blocks');
      expect(outcome.state.error?.message).toContain('page-huge has more than 2000 top-level blocks');
      expect(huge.received.filter((r) => r.path.endsWith('/children'))).toHaveLength(20);
      expect(docs.received.length).toBe(published);
    } finally {
      await huge.close();
    }
  });

  it('an invalid body ends in error listing every bad field, before any call', async () => {
    const before = workspace.received.length;
    const outcome = await runWebhook(engine, def, { pageId: 5, destination: '' });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('Validate');
    expect(problemPaths(outcome)).toEqual(['body.destination', 'body.pageId']);
    expect(workspace.received.length).toBe(before);

    const empty = await runWebhook(engine, def, {});
    expect(problemPaths(empty)).toEqual(['body.destination', 'body.pageId']);
  });

  it('a failing downstream ends in error naming the node', async () => {
    workspace.failNext('/v1/blocks', 500);
    const down = await runWebhook(engine, def, { pageId: 'page-123', destination: 'x' });
    expect(down.status).toBe('error');
    expect(down.state.error).toMatchObject({ node: 'Get blocks', message: 'Request failed with status 500' });

    const missing = await runWebhook(engine, def, { pageId: 'page-nope', destination: 'x' });
    expect(missing.state.error).toMatchObject({
      node: 'Get page',
      message: 'Request failed with status 404',
    });
    expect(missing.state.error?.description).toContain('object_not_found');

    docs.failNext('/api/docs/pages', 503);
    const publish = await runWebhook(engine, def, { pageId: 'page-123', destination: 'x' });
    expect(publish.state.error).toMatchObject({ node: 'Publish', message: 'Request failed with status 503' });
  });

  it('dedupes by the Idempotency-Key (or X-Request-Id) header when the caller sends one', async () => {
    const key = dedupeKeyOf(def);
    const item = (headers: Record<string, string>) => ({ headers, body: { pageId: 'p' } });
    expect(await engine.evaluateExpression(def, key, item({ 'idempotency-key': 'k1' }))).toBe('k1');
    expect(await engine.evaluateExpression(def, key, item({ 'x-request-id': 'r1' }))).toBe('r1');
    expect(await engine.evaluateExpression(def, key, item({}))).toBeUndefined();
  });
});
