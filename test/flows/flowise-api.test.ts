/**
 * The rest of Flowise's API (issue 36): ping, tools, variables (under /flowise/api/v1, as n8n holds
 * /api/v1/variables), assistants, feedback, leads and the upsert history, in Flowise's shapes and
 * error body, scoped to the caller's account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, createFlow, expectFlowError, expectNamesField, type Flow, predict } from './support.js';

describe.each(await testDialects())('flows: the rest of Flowise’s API on %s', (dialect) => {
  let bed: LlmTestbed;
  let flow: Flow;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    flow = await createFlow(bed, { name: 'api', kind: 'llm', model: 'llama3.2' });
  });
  afterAll(() => bed?.close());

  it('ping answers pong without a key', async () => {
    const res = await call(bed, 'GET', '/api/v1/ping', { key: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe('pong');
  });

  it('tools: create, list, get, update, delete in Flowise’s shape; a missing one is Flowise’s 404', async () => {
    const created = await call(bed, 'POST', '/api/v1/tools', {
      body: { name: 'add', description: 'Adds', color: '#fff', schema: '[]', func: 'return 1;' },
    });
    expect(created.status, created.text).toBe(200);
    const tool = created.json() as Record<string, unknown>;
    expect(tool).toMatchObject({
      name: 'add',
      description: 'Adds',
      color: '#fff',
      iconSrc: null,
      func: 'return 1;',
    });
    expect(typeof tool.createdDate).toBe('string');
    const list = (await call(bed, 'GET', '/api/v1/tools')).json() as Array<{ id: string }>;
    expect(list.map((t) => t.id)).toContain(tool.id);
    const updated = await call(bed, 'PUT', `/api/v1/tools/${tool.id}`, { body: { description: 'Adds two' } });
    expect(updated.json()).toMatchObject({ name: 'add', description: 'Adds two' });
    expect((await call(bed, 'GET', `/api/v1/tools/${tool.id}`)).json()).toMatchObject({
      description: 'Adds two',
    });
    expect((await call(bed, 'DELETE', `/api/v1/tools/${tool.id}`)).json()).toEqual({ affected: 1 });
    expectFlowError(await call(bed, 'GET', `/api/v1/tools/${tool.id}`), 404, 'NOT_FOUND');
    expectNamesField(await call(bed, 'POST', '/api/v1/tools', { body: { description: 'no name' } }), 'name');
  });

  it('variables live under /flowise/api/v1 (n8n keeps /api/v1/variables)', async () => {
    const created = await call(bed, 'POST', '/flowise/api/v1/variables', {
      body: { name: 'tone', value: 'warm', type: 'static' },
    });
    expect(created.status, created.text).toBe(200);
    const variable = created.json() as { id: string };
    expect(variable).toMatchObject({ name: 'tone', value: 'warm', type: 'static' });
    const updated = await call(bed, 'PUT', `/flowise/api/v1/variables/${variable.id}`, {
      body: { value: 'cool' },
    });
    expect(updated.json()).toMatchObject({ value: 'cool' });
    const list = (await call(bed, 'GET', '/flowise/api/v1/variables')).json() as Array<{ name: string }>;
    expect(list.map((v) => v.name)).toContain('tone');
    expectNamesField(
      await call(bed, 'POST', '/flowise/api/v1/variables', { body: { name: 'no spaces allowed' } }),
      'name',
    );
    expect((await call(bed, 'DELETE', `/flowise/api/v1/variables/${variable.id}`)).status).toBe(200);
  });

  it('assistants: details are JSON text', async () => {
    const created = await call(bed, 'POST', '/api/v1/assistants', {
      body: { details: JSON.stringify({ name: 'helper', instructions: 'Be kind' }), type: 'CUSTOM' },
    });
    expect(created.status, created.text).toBe(200);
    const assistant = created.json() as { id: string };
    expect((await call(bed, 'GET', `/api/v1/assistants/${assistant.id}`)).json()).toMatchObject({
      type: 'CUSTOM',
      credential: null,
    });
    expectNamesField(
      await call(bed, 'POST', '/api/v1/assistants', { body: { details: '{oops' } }),
      'details',
    );
    expect((await call(bed, 'DELETE', `/api/v1/assistants/${assistant.id}`)).status).toBe(200);
  });

  it('feedback rates an answer of the chat; a message of another chat or none is refused', async () => {
    const answer = await predict(bed, flow.id, { question: 'Rate me' });
    const body = { chatflowid: flow.id, chatId: answer.chatId, messageId: answer.chatMessageId };
    const created = await call(bed, 'POST', '/api/v1/feedback', {
      body: { ...body, rating: 'THUMBS_UP', content: 'Nice' },
    });
    expect(created.status, created.text).toBe(200);
    const feedback = created.json() as { id: string };
    expect(feedback).toMatchObject({ ...body, rating: 'THUMBS_UP', content: 'Nice' });
    const changed = await call(bed, 'PUT', `/api/v1/feedback/${feedback.id}`, {
      body: { rating: 'THUMBS_DOWN' },
    });
    expect(changed.json()).toMatchObject({ rating: 'THUMBS_DOWN', content: 'Nice' });
    const listed = (await call(bed, 'GET', `/api/v1/feedback/${flow.id}?chatId=${answer.chatId}`)).json();
    expect(listed).toEqual([expect.objectContaining({ id: feedback.id, rating: 'THUMBS_DOWN' })]);
    expectNamesField(
      await call(bed, 'POST', '/api/v1/feedback', {
        body: { ...body, chatId: 'other', rating: 'THUMBS_UP' },
      }),
      'chatId',
    );
    expectFlowError(
      await call(bed, 'POST', '/api/v1/feedback', {
        body: { ...body, messageId: 'nope', rating: 'THUMBS_UP' },
      }),
      404,
      'NOT_FOUND',
    );
    expectNamesField(
      await call(bed, 'POST', '/api/v1/feedback', { body: { ...body, rating: 'MEH' } }),
      'rating',
    );
  });

  it('leads of a chatflow; an unknown chatflow is Flowise’s 404', async () => {
    const created = await call(bed, 'POST', '/api/v1/leads', {
      body: { chatflowid: flow.id, chatId: 'c1', name: 'Ada', email: 'ada@example.com' },
    });
    expect(created.status, created.text).toBe(200);
    const leads = (await call(bed, 'GET', `/api/v1/leads/${flow.id}`)).json();
    expect(leads).toEqual([
      expect.objectContaining({ chatflowid: flow.id, name: 'Ada', email: 'ada@example.com' }),
    ]);
    expectFlowError(
      await call(bed, 'POST', '/api/v1/leads', { body: { chatflowid: 'flow_nope' } }),
      404,
      'FLOW_NOT_FOUND',
    );
  });

  it('upsert history: each vector upsert is listed; PATCH deletes by id', async () => {
    const rag = await createFlow(bed, {
      name: 'hist',
      flowData: JSON.stringify({
        nodes: [
          { id: 'chatOllama_0', data: { name: 'chatOllama', inputs: { model: 'llama3.2' } } },
          { id: 'memoryVectorStore_0', data: { name: 'memoryVectorStore', inputs: {} } },
          {
            id: 'retrievalQAChain_0',
            data: {
              name: 'retrievalQAChain',
              inputs: {
                model: '{{chatOllama_0.data.instance}}',
                vectorStoreRetriever: '{{memoryVectorStore_0.data.instance}}',
              },
            },
          },
        ],
        edges: [
          { source: 'chatOllama_0', target: 'retrievalQAChain_0' },
          { source: 'memoryVectorStore_0', target: 'retrievalQAChain_0' },
        ],
      }),
    });
    const upsert = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, {
      body: { documents: [{ pageContent: 'Otters hold hands.' }] },
    });
    expect(upsert.status, upsert.text).toBe(200);
    const history = (await call(bed, 'GET', `/api/v1/upsert-history/${rag.id}?order=DESC`)).json() as Array<{
      id: string;
      result: Record<string, unknown>;
    }>;
    expect(history).toHaveLength(1);
    expect(history[0]?.result).toMatchObject({ numAdded: expect.any(Number), numSkipped: 0 });
    const removed = await call(bed, 'PATCH', `/api/v1/upsert-history/${rag.id}`, {
      body: { ids: [history[0]?.id] },
    });
    expect(removed.json()).toEqual({ affected: 1 });
    expect((await call(bed, 'GET', `/api/v1/upsert-history/${rag.id}`)).json()).toEqual([]);

    // The history is a log: at its cap (10,000 records) the oldest make room; the upsert still answers 200.
    const db = bed.p.ctx.db;
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      id: `old-${String(i).padStart(5, '0')}`,
      account_id: bed.p.accountId,
      kind: 'upsert',
      flow_id: rag.id,
      body: '{"result":{},"flowData":{}}',
      created_at: new Date(Date.UTC(2020, 0, 1, 0, 0, i % 60, Math.floor(i / 60))).toISOString(),
      updated_at: '2020-01-01T00:00:00.000Z',
    }));
    for (let i = 0; i < rows.length; i += 500)
      await db
        .insertInto('flowise_objects')
        .values(rows.slice(i, i + 500))
        .execute();
    const full = await call(bed, 'POST', `/api/v1/vector/upsert/${rag.id}`, {
      body: { documents: [{ pageContent: 'Seals sleep in water.' }] },
    });
    expect(full.status, full.text).toBe(200);
    const kept = await db
      .selectFrom('flowise_objects')
      .select('id')
      .where('account_id', '=', bed.p.accountId)
      .where('kind', '=', 'upsert')
      .execute();
    expect(kept).toHaveLength(10_000);
    expect(kept.map((r) => r.id)).not.toContain('old-00000');
    expect(kept.filter((r) => !r.id.startsWith('old-'))).toHaveLength(1);
  });

  it('document store: a store is a knowledge-base topic; upsert, query, chunks, loaders, delete', async () => {
    const created = await call(bed, 'POST', '/api/v1/document-store/store', {
      body: { name: 'handbook', description: 'Team handbook' },
    });
    expect(created.status, created.text).toBe(200);
    const store = created.json() as { id: string; status: string; topic: string };
    expect(store).toMatchObject({ name: 'handbook', status: 'EMPTY', loaders: [] });
    const upsert = await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
      body: {
        loader: {
          name: 'plainText',
          config: { text: 'Holidays: every team member has 30 days of leave a year.' },
        },
        splitter: { name: 'recursiveCharacterTextSplitter', config: { chunkSize: 500 } },
      },
    });
    expect(upsert.status, upsert.text).toBe(200);
    const { numAdded, docId } = upsert.json() as { numAdded: number; docId: string };
    expect(numAdded).toBeGreaterThan(0);
    const got = (await call(bed, 'GET', `/api/v1/document-store/store/${store.id}`)).json();
    expect(got).toMatchObject({
      status: 'UPSERTED',
      totalChunks: numAdded,
      loaders: [expect.objectContaining({ id: docId })],
    });
    const query = await call(bed, 'POST', '/api/v1/document-store/vectorstore/query', {
      body: { storeId: store.id, query: 'How many days of leave?' },
    });
    expect(query.status, query.text).toBe(200);
    expect((query.json() as { docs: Array<{ pageContent: string }> }).docs[0]?.pageContent).toContain(
      '30 days',
    );
    const chunks = (await call(bed, 'GET', `/api/v1/document-store/chunks/${store.id}/${docId}/1`)).json();
    expect(chunks).toMatchObject({ count: numAdded, currentPage: 1, storeName: 'handbook' });
    const list = (await call(bed, 'GET', '/api/v1/document-store/store')).json() as Array<{ id: string }>;
    expect(list.map((s) => s.id)).toContain(store.id);
    const renamed = await call(bed, 'PUT', `/api/v1/document-store/store/${store.id}`, {
      body: { name: 'hb' },
    });
    expect(renamed.json()).toMatchObject({ name: 'hb', description: 'Team handbook' });
    const removed = await call(bed, 'DELETE', `/api/v1/document-store/loader/${store.id}/${docId}`);
    expect(removed.json()).toMatchObject({ status: 'EMPTY', loaders: [] });
    const after = await call(bed, 'POST', '/api/v1/document-store/vectorstore/query', {
      body: { storeId: store.id, query: 'How many days of leave?' },
    });
    expect((after.json() as { docs: unknown[] }).docs).toEqual([]);
    expect((await call(bed, 'DELETE', `/api/v1/document-store/vectorstore/${store.id}`)).json()).toEqual({
      deleted: 0,
    });
    expect((await call(bed, 'DELETE', `/api/v1/document-store/store/${store.id}`)).status).toBe(200);
    expectFlowError(await call(bed, 'GET', `/api/v1/document-store/store/${store.id}`), 404, 'NOT_FOUND');
    expectNamesField(
      await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
        body: { loader: { name: 'x' } },
      }),
      'loader',
    );
  });
});
