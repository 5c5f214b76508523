import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects, uniqueName } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { type AiNodeSpec, aiWorkflow, LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { createCredential, createWorkflow } from './support.js';

/**
 * The platform's knowledge base as an n8n vector store (`n8n-nodes-platform.vectorStoreKnowledgeBase`)
 * and the built-in embedders as an embeddings sub-node (`n8n-nodes-platform.embeddingsBuiltin`), on a
 * whole platform (documents, llm and workflows modules): insert through the knowledge service, load and
 * retrieve-as-tool by its hybrid search, always in the workflow's own account.
 */

const KB = 'n8n-nodes-platform.vectorStoreKnowledgeBase';
const openai = new FakeOpenAi();
beforeAll(() => openai.start());
afterAll(() => openai.stop());
beforeEach(() => openai.reset());

describe.each(await testDialects())('the knowledge base as a vector store, on %s', (dialect) => {
  let p: TestPlatform;
  let otherKey = '';
  const topic = uniqueName('faq');

  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      env: { QUEUE_PREFIX: uniqueName('q'), OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' },
    });
    otherKey = await otherAccountKey(p);
  });
  afterAll(() => p?.close());

  async function run(
    nodes: AiNodeSpec[],
    edges: Array<[string, string, string?]>,
    startNode: string,
    items: Array<{ json: Record<string, unknown> }> = [{ json: {} }],
    key?: string,
  ): Promise<Execution> {
    const wf = aiWorkflow(nodes, edges);
    const id = await createWorkflow(
      p,
      { name: wf.name, nodes: wf.nodes, connections: wf.connections, settings: {} },
      key,
    );
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { startNode, items },
      ...(key ? { key } : {}),
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Execution;
  }
  const out = (e: Execution, node: string) =>
    (e.data.resultData.runData[node]?.[0]?.data?.main[0] ?? []).map((i) => i.json);
  const errorOf = (e: Execution) =>
    (e.data.resultData.error as { message?: string } | undefined)?.message ?? null;

  const insert = (key?: string, texts = ['Refunds take five working days.', 'Bananas are yellow.']) =>
    run(
      [
        { name: 'Insert', type: KB, typeVersion: 1, parameters: { mode: 'insert', topic } },
        { name: 'Loader', type: `${LC}.documentDefaultDataLoader`, typeVersion: 1.1, parameters: {} },
      ],
      [
        ['Trigger', 'Insert'],
        ['Loader', 'Insert', 'ai_document'],
      ],
      'Insert',
      texts.map((text) => ({ json: { text } })),
      key,
    );
  const load = (prompt: string, key?: string) =>
    run(
      [{ name: 'Load', type: KB, typeVersion: 1, parameters: { mode: 'load', topic, prompt, topK: 2 } }],
      [['Trigger', 'Load']],
      'Load',
      [{ json: {} }],
      key,
    );

  it("insert adds the loader's documents to the account's topic; load finds them by hybrid search", async () => {
    const inserted = await insert();
    expect(errorOf(inserted)).toBeNull();
    expect(out(inserted, 'Insert').map((j) => j.pageContent)).toEqual([
      'Refunds take five working days.',
      'Bananas are yellow.',
    ]);
    const topics = await p.ctx.apis.documents?.knowledge.topics(p.accountId);
    expect(topics?.find((t) => t.topic === topic)).toMatchObject({ documentCount: 2 });

    const loaded = await load('How long do refunds take?');
    expect(errorOf(loaded)).toBeNull();
    const found = out(loaded, 'Load') as Array<{
      document: { pageContent: string; metadata: Record<string, unknown> };
      score: number;
    }>;
    expect(found[0]?.document.pageContent).toBe('Refunds take five working days.');
    expect(found[0]?.document.metadata).toMatchObject({ topic });
    expect(typeof found[0]?.document.metadata.documentId).toBe('string');
    expect(found[0]?.score).toBeGreaterThan(0);
    // The same content inserted again is the same document (the knowledge base's own dedupe).
    await insert();
    expect(
      (await p.ctx.apis.documents?.knowledge.topics(p.accountId))?.find((t) => t.topic === topic),
    ).toMatchObject({
      documentCount: 2,
    });
  });

  it("another account's topic of the same name is its own: neither sees the other's documents", async () => {
    const theirs = await insert(otherKey, ['The vault code of the other account is 4711.']);
    expect(errorOf(theirs)).toBeNull();
    const mine = out(await load('vault code'), 'Load') as Array<{ document: { pageContent: string } }>;
    expect(mine.map((m) => m.document.pageContent).join(' ')).not.toContain('4711');
    const theirLoad = out(await load('refunds', otherKey), 'Load') as Array<{
      document: { pageContent: string };
    }>;
    expect(theirLoad.map((m) => m.document.pageContent).join(' ')).not.toContain('Refunds');
    expect(theirLoad.map((m) => m.document.pageContent)).toContain(
      'The vault code of the other account is 4711.',
    );
  });

  it('retrieve-as-tool: an AI Agent searches the topic through the tool the store supplies', async () => {
    const cred = await createCredential(p, uniqueName('oa'), 'openAiApi', {
      apiKey: 'sk',
      url: `${openai.base}/v1`,
    });
    openai.queue(
      toolCalls([
        { id: 'call_kb', name: 'faq_search', arguments: JSON.stringify({ input: 'refund delay' }) },
      ]),
      completion('Five working days.'),
    );
    const e = await run(
      [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 3.1,
          parameters: { promptType: 'define', text: 'How long do refunds take?', options: {} },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: cred, name: 'oa' } },
        },
        {
          name: 'FAQ',
          type: KB,
          typeVersion: 1,
          parameters: {
            mode: 'retrieve-as-tool',
            topic,
            toolName: 'faq_search',
            toolDescription: 'Searches the FAQ',
            topK: 1,
          },
        },
      ],
      [
        ['Trigger', 'AI Agent'],
        ['Model', 'AI Agent', 'ai_languageModel'],
        ['FAQ', 'AI Agent', 'ai_tool'],
      ],
      'AI Agent',
    );
    expect(errorOf(e)).toBeNull();
    expect(out(e, 'AI Agent')).toEqual([{ output: 'Five working days.' }]);
    const tools = (openai.requests[0]?.tools ?? []) as Array<{
      function: { name: string; description: string };
    }>;
    expect(tools[0]?.function).toMatchObject({ name: 'faq_search', description: 'Searches the FAQ' });
    const result = ((openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
    expect(result?.role).toBe('tool');
    expect(JSON.parse(result?.content ?? '[]')[0]).toMatchObject({
      pageContent: 'Refunds take five working days.',
    });
  });

  it('bad input: an attached embeddings node is refused at save, a bad topic and an empty prompt are node errors', async () => {
    const wf = aiWorkflow(
      [
        { name: 'Load', type: KB, typeVersion: 1, parameters: { mode: 'load', topic, prompt: 'x' } },
        { name: 'Emb', type: 'n8n-nodes-platform.embeddingsBuiltin', typeVersion: 1, parameters: {} },
      ],
      [
        ['Trigger', 'Load'],
        ['Emb', 'Load', 'ai_embedding'],
      ],
    );
    const saved = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: { name: wf.name, nodes: wf.nodes, connections: wf.connections, settings: {} } as object,
    });
    expect(saved.statusCode).toBe(400);
    expect(saved.body).toContain('ai_embedding');
    const badTopic = await run(
      [
        {
          name: 'Load',
          type: KB,
          typeVersion: 1,
          parameters: { mode: 'load', topic: 'two words', prompt: 'x' },
        },
      ],
      [['Trigger', 'Load']],
      'Load',
    );
    expect(errorOf(badTopic)).toMatch(/is not a topic name/);
    const empty = await load('   ');
    expect(errorOf(empty)).toMatch(/query is empty/);
  });
});

describe.each(await testDialects())('built-in embeddings as an n8n sub-node, on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      env: { QUEUE_PREFIX: uniqueName('q'), OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' },
    });
  });
  afterAll(() => p?.close());

  async function run(
    model: string,
    mode: 'insert' | 'load',
    items: Array<{ json: Record<string, unknown> }>,
  ) {
    const wf = aiWorkflow(
      [
        {
          name: 'Store',
          type: `${LC}.vectorStoreInMemory`,
          typeVersion: 1.3,
          parameters: { mode, memoryKey: 'builtin-emb', prompt: 'yellow fruit', topK: 1 },
        },
        { name: 'Loader', type: `${LC}.documentDefaultDataLoader`, typeVersion: 1.1, parameters: {} },
        { name: 'Emb', type: 'n8n-nodes-platform.embeddingsBuiltin', typeVersion: 1, parameters: { model } },
      ],
      [
        ['Trigger', 'Store'],
        ['Emb', 'Store', 'ai_embedding'],
        ...(mode === 'insert' ? [['Loader', 'Store', 'ai_document'] as [string, string, string]] : []),
      ],
    );
    const id = await createWorkflow(p, {
      name: wf.name,
      nodes: wf.nodes,
      connections: wf.connections,
      settings: {},
    });
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { startNode: 'Store', items },
    });
    expect(res.statusCode).toBe(200);
    const e = res.json() as Execution;
    return {
      error: (e.data.resultData.error as { message?: string } | undefined)?.message ?? null,
      out: (e.data.resultData.runData.Store?.[0]?.data?.main[0] ?? []).map((i) => i.json),
    };
  }

  it('the Simple Vector Store embeds with builtin/hashed-ngrams: insert, then the nearest document', async () => {
    const inserted = await run('builtin/hashed-ngrams', 'insert', [
      { json: { text: 'Bananas are a yellow fruit.' } },
      { json: { text: 'Invoices are due in thirty days.' } },
    ]);
    expect(inserted.error).toBeNull();
    expect(inserted.out).toHaveLength(2);
    const loaded = await run('builtin/hashed-ngrams', 'load', [{ json: {} }]);
    expect(loaded.error).toBeNull();
    expect((loaded.out[0] as { document: { pageContent: string } }).document.pageContent).toBe(
      'Bananas are a yellow fruit.',
    );
  });

  it('a model that is not built in is refused by name (no paid model on the account without a key)', async () => {
    const refused = await run('gpt-4o-mini', 'load', [{ json: {} }]);
    expect(refused.error).toMatch(/'gpt-4o-mini' is not a built-in embedding model/);
    const unknown = await run('builtin/nope', 'load', [{ json: {} }]);
    expect(unknown.error).toMatch(/not a built-in embedding model/);
  });
});
