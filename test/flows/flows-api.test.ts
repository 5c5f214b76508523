import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES } from '../../src/modules/flows/definition.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { createWorkflow, flow as workflowBody } from '../workflows/support.js';
import {
  call,
  createFlow,
  customerToken,
  expectFlowError,
  expectNamesField,
  type Flow,
  predict,
  seedTopic,
  tick,
} from './support.js';

// The default is the product's text; what matters is that it places both the context and the question.
const RAG_TEMPLATE = DEFAULT_TEMPLATES.rag;

describe.each(await testDialects())('flows: definitions over HTTP on %s', (dialect) => {
  let bed: LlmTestbed;
  let workflowId: string;
  let noWebhookWorkflowId: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    await seedTopic(bed, 'kb');
    workflowId = await createWorkflow(
      bed.p,
      workflowBody('flow backend', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'flow-backend', responseMode: 'lastNode' } },
        { name: 'Set', type: 'set', parameters: { values: { text: 'from workflow' }, keepOnlySet: true } },
      ]),
    );
    noWebhookWorkflowId = await createWorkflow(
      bed.p,
      workflowBody('no webhook', [{ name: 'Set', type: 'set', parameters: { values: { a: 1 } } }]),
    );
  });
  afterAll(() => bed?.close());

  const key = (body: Record<string, unknown>) =>
    bed.p.createKey({ name: 'flows', type: 'development', services: ['flow'], role: 'Writer', ...body });

  it('POST makes an llm flow with the contract’s defaults; GET answers the same', async () => {
    const created = await createFlow(bed, { name: 'helpdesk', kind: 'llm', model: 'llama3.2' });
    expect(created).toMatchObject({
      id: expect.any(String),
      name: 'helpdesk',
      kind: 'llm',
      model: 'llama3.2',
      systemPrompt: '',
      promptTemplate: '{question}',
      topics: [],
      topK: 4,
      memory: { type: 'none', windowSize: 5 },
      overridableFields: [],
      isStreaming: true,
      type: 'CHATFLOW',
    });
    expect(Number.isNaN(Date.parse(created.createdDate))).toBe(false);
    expect(Number.isNaN(Date.parse(created.updatedDate))).toBe(false);
    const got = await call(bed, 'GET', `/api/v1/chatflows/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.json()).toEqual(created);
  });

  it('a rag flow defaults to the contract’s context template', async () => {
    const rag = await createFlow(bed, {
      name: 'kb bot',
      kind: 'rag',
      model: 'builtin/extractive',
      topics: ['kb'],
    });
    expect(rag).toMatchObject({ kind: 'rag', topics: ['kb'], topK: 4 });
    expect(rag.promptTemplate).toBe(RAG_TEMPLATE);
    expect(rag.promptTemplate).toMatch(/\{context\}[\s\S]*\{question\}/);
  });

  it('every field given at creation is kept', async () => {
    const full = {
      name: 'full',
      kind: 'rag',
      model: 'gpt-4o-mini',
      systemPrompt: 'Be brief.',
      promptTemplate: '{history}\n{context}\n{vars.tone}: {question}',
      topics: ['kb'],
      topK: 7,
      minScore: 0.1,
      temperature: 0.3,
      maxTokens: 256,
      memory: { type: 'window', windowSize: 3 },
      overridableFields: ['systemPrompt', 'topK'],
      isStreaming: false,
      rateLimit: { limitMax: 10, limitDuration: 60, limitMsg: 'easy' },
    };
    const saved = await createFlow(bed, full);
    expect(saved).toMatchObject(full);
  });

  it('a workflow flow names a workflow of the account that has a webhook node', async () => {
    const saved = await createFlow(bed, { name: 'wf', kind: 'workflow', workflowId });
    expect(saved).toMatchObject({ kind: 'workflow', workflowId, topics: [] });
  });

  it('GET /api/v1/chatflows is a plain array, newest first', async () => {
    const older = await createFlow(bed, { name: 'older', kind: 'llm', model: 'llama3.2' });
    await tick(bed);
    const newer = await createFlow(bed, { name: 'newer', kind: 'llm', model: 'llama3.2' });
    const res = await call(bed, 'GET', '/api/v1/chatflows');
    expect(res.status).toBe(200);
    const list = res.json() as Flow[];
    expect(Array.isArray(list)).toBe(true);
    const ids = list.map((f) => f.id);
    expect(ids[0]).toBe(newer.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    expect(list.find((f) => f.id === older.id)).toMatchObject({ name: 'older', type: 'CHATFLOW' });
  });

  it('PUT takes a part of the definition, keeps the rest and validates like POST', async () => {
    const saved = await createFlow(bed, {
      name: 'edit me',
      kind: 'llm',
      model: 'llama3.2',
      systemPrompt: 'A',
    });
    await tick(bed);
    const res = await call(bed, 'PUT', `/api/v1/chatflows/${saved.id}`, {
      body: { systemPrompt: 'B', memory: { type: 'window', windowSize: 2 } },
    });
    expect(res.status, res.text).toBe(200);
    const updated = res.json() as Flow;
    expect(updated).toMatchObject({
      id: saved.id,
      name: 'edit me',
      model: 'llama3.2',
      systemPrompt: 'B',
      memory: { type: 'window', windowSize: 2 },
      createdDate: saved.createdDate,
    });
    expect(Date.parse(updated.updatedDate)).toBeGreaterThan(Date.parse(saved.updatedDate));
    expectNamesField(
      await call(bed, 'PUT', `/api/v1/chatflows/${saved.id}`, { body: { promptTemplate: 'no placeholder' } }),
      'promptTemplate',
    );
    expectNamesField(
      await call(bed, 'PUT', `/api/v1/chatflows/${saved.id}`, { body: { model: 'nomic-embed-text' } }),
      'model',
    );
    const after = (await call(bed, 'GET', `/api/v1/chatflows/${saved.id}`)).json() as Flow;
    expect(after).toMatchObject({ name: 'edit me', model: 'llama3.2', promptTemplate: '{question}' });
  });

  it('PUT accepts back what GET answered (id, type, dates and null fields included)', async () => {
    const saved = await createFlow(bed, {
      name: 'round trip',
      kind: 'llm',
      model: 'llama3.2',
      systemPrompt: 'B',
    });
    const read = (await call(bed, 'GET', `/api/v1/chatflows/${saved.id}`)).json() as Flow;
    const echoed = await call(bed, 'PUT', `/api/v1/chatflows/${saved.id}`, {
      body: { ...read, name: 'renamed' },
    });
    expect(echoed.status, echoed.text).toBe(200);
    expect(echoed.json()).toMatchObject({ name: 'renamed', systemPrompt: 'B' });
  });

  it('DELETE answers {deleted, id}; the flow is gone after', async () => {
    const saved = await createFlow(bed, { name: 'doomed', kind: 'llm', model: 'llama3.2' });
    await predict(bed, saved.id, { question: 'remember me' });
    const res = await call(bed, 'DELETE', `/api/v1/chatflows/${saved.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({ deleted: true, id: saved.id });
    expectFlowError(await call(bed, 'GET', `/api/v1/chatflows/${saved.id}`), 404, 'FLOW_NOT_FOUND');
    expectFlowError(await call(bed, 'GET', `/api/v1/chatmessage/${saved.id}`), 404, 'FLOW_NOT_FOUND');
    expectFlowError(await call(bed, 'DELETE', `/api/v1/chatflows/${saved.id}`), 404, 'FLOW_NOT_FOUND');
  });

  describe('400 at save time, naming the field', () => {
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['an llm flow without a model', { name: 'x', kind: 'llm' }, 'model'],
      ['a rag flow without a model', { name: 'x', kind: 'rag', topics: ['kb'] }, 'model'],
      ['an unknown model', { name: 'x', kind: 'llm', model: 'no-such-model' }, 'model'],
      ['an embedding model as the model', { name: 'x', kind: 'llm', model: 'nomic-embed-text' }, 'model'],
      [
        'a topic with no documents',
        { name: 'x', kind: 'rag', model: 'llama3.2', topics: ['empty'] },
        'topics',
      ],
      ['a rag flow without topics', { name: 'x', kind: 'rag', model: 'llama3.2', topics: [] }, 'topics'],
      [
        'eleven topics',
        { name: 'x', kind: 'rag', model: 'llama3.2', topics: Array.from({ length: 11 }, (_, i) => `kb${i}`) },
        'topics',
      ],
      [
        'a template without {question}',
        { name: 'x', kind: 'llm', model: 'llama3.2', promptTemplate: 'Answer: {context}' },
        'promptTemplate',
      ],
      ['a workflow flow without a workflow', { name: 'x', kind: 'workflow' }, 'workflowId'],
      ['an unknown workflow', { name: 'x', kind: 'workflow', workflowId: 'wf_nope' }, 'workflowId'],
      ['a kind that is not one', { name: 'x', kind: 'agent', model: 'llama3.2' }, 'kind'],
      ['no name', { kind: 'llm', model: 'llama3.2' }, 'name'],
      ['topK as a string', { name: 'x', kind: 'llm', model: 'llama3.2', topK: 'four' }, 'topK'],
      ['topK 21', { name: 'x', kind: 'llm', model: 'llama3.2', topK: 21 }, 'topK'],
      ['temperature 3', { name: 'x', kind: 'llm', model: 'llama3.2', temperature: 3 }, 'temperature'],
      ['maxTokens 0', { name: 'x', kind: 'llm', model: 'llama3.2', maxTokens: 0 }, 'maxTokens'],
      [
        'an unknown memory type',
        { name: 'x', kind: 'llm', model: 'llama3.2', memory: { type: 'all' } },
        'memory',
      ],
      [
        'a window of 51',
        { name: 'x', kind: 'llm', model: 'llama3.2', memory: { type: 'window', windowSize: 51 } },
        'windowSize',
      ],
      [
        'a field that cannot be overridden',
        { name: 'x', kind: 'llm', model: 'llama3.2', overridableFields: ['name'] },
        'overridableFields',
      ],
      [
        'isStreaming as a string',
        { name: 'x', kind: 'llm', model: 'llama3.2', isStreaming: 'yes' },
        'isStreaming',
      ],
      [
        'a rate limit of 0',
        { name: 'x', kind: 'llm', model: 'llama3.2', rateLimit: { limitMax: 0, limitDuration: 60 } },
        'limitMax',
      ],
    ];
    it.each(bad)('%s', async (_name, body, field) => {
      expectNamesField(await call(bed, 'POST', '/api/v1/chatflows', { body }), field);
    });

    it('a workflow without a webhook node', async () => {
      expectNamesField(
        await call(bed, 'POST', '/api/v1/chatflows', {
          body: { name: 'x', kind: 'workflow', workflowId: noWebhookWorkflowId },
        }),
        'workflowId',
      );
    });

    it('a body that is not JSON', async () => {
      expectFlowError(
        await call(bed, 'POST', '/api/v1/chatflows', { body: '{"name":' }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });

  it('404 FLOW_NOT_FOUND for an unknown flow on every path', async () => {
    const id = 'flow_does_not_exist';
    expectFlowError(await call(bed, 'GET', `/api/v1/chatflows/${id}`), 404, 'FLOW_NOT_FOUND');
    expectFlowError(
      await call(bed, 'PUT', `/api/v1/chatflows/${id}`, { body: { name: 'n' } }),
      404,
      'FLOW_NOT_FOUND',
    );
    expectFlowError(await call(bed, 'DELETE', `/api/v1/chatflows/${id}`), 404, 'FLOW_NOT_FOUND');
    expectFlowError(
      await call(bed, 'GET', `/api/v1/chatflows-streaming/${id}`, { key: null }),
      404,
      'FLOW_NOT_FOUND',
    );
  });

  it('another account’s flow is a 404 everywhere, and not in its list', async () => {
    const mine = await createFlow(bed, { name: 'private', kind: 'llm', model: 'llama3.2' });
    const stranger = await otherAccountKey(bed.p);
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/chatflows/${mine.id}`],
      ['PUT', `/api/v1/chatflows/${mine.id}`, { name: 'stolen' }],
      ['DELETE', `/api/v1/chatflows/${mine.id}`],
      ['POST', `/api/v1/prediction/${mine.id}`, { question: 'hi' }],
      ['GET', `/api/v1/chatmessage/${mine.id}`],
      ['DELETE', `/api/v1/chatmessage/${mine.id}`],
    ];
    for (const [method, path, body] of paths) {
      const res = await call(bed, method, path, { key: stranger, ...(body ? { body } : {}) });
      expectFlowError(res, 404, 'FLOW_NOT_FOUND');
    }
    const theirs = await call(bed, 'GET', '/api/v1/chatflows', { key: stranger });
    expect(theirs.status).toBe(200);
    expect(theirs.json()).toEqual([]);
    expect((await call(bed, 'GET', `/api/v1/chatflows/${mine.id}`)).json()).toMatchObject({
      name: 'private',
    });
  });

  it('401 without a key or with a bad one, in the flows error body', async () => {
    expectFlowError(await call(bed, 'GET', '/api/v1/chatflows', { key: null }), 401, 'UNAUTHORIZED');
    expectFlowError(
      await call(bed, 'POST', '/api/v1/chatflows', {
        key: null,
        body: { name: 'x', kind: 'llm', model: 'llama3.2' },
      }),
      401,
      'UNAUTHORIZED',
    );
    expectFlowError(await call(bed, 'GET', '/api/v1/chatflows', { key: 'not-a-key' }), 401, 'UNAUTHORIZED');
  });

  it('403 for a key of another service', async () => {
    const { key: llmOnly } = await key({ services: ['llm'] });
    const res = expectFlowError(
      await call(bed, 'GET', '/api/v1/chatflows', { key: llmOnly }),
      403,
      'FORBIDDEN',
    );
    expect(res.error).toBe(true);
  });

  it('a Reader reads but may not save; a Writer saves but may not delete', async () => {
    const existing = await createFlow(bed, { name: 'shared', kind: 'llm', model: 'llama3.2' });
    const { key: reader } = await key({ role: 'Reader' });
    expect((await call(bed, 'GET', '/api/v1/chatflows', { key: reader })).status).toBe(200);
    expect((await call(bed, 'GET', `/api/v1/chatflows/${existing.id}`, { key: reader })).status).toBe(200);
    const body = { name: 'x', kind: 'llm', model: 'llama3.2' };
    expectFlowError(await call(bed, 'POST', '/api/v1/chatflows', { key: reader, body }), 403, 'FORBIDDEN');
    expectFlowError(
      await call(bed, 'PUT', `/api/v1/chatflows/${existing.id}`, { key: reader, body: { name: 'y' } }),
      403,
      'FORBIDDEN',
    );
    expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${existing.id}`, { key: reader, body: { question: 'q' } }),
      403,
      'FORBIDDEN',
    );
    const { key: writer } = await key({ role: 'Writer' });
    expect((await call(bed, 'POST', '/api/v1/chatflows', { key: writer, body })).status).toBe(201);
    expectFlowError(
      await call(bed, 'DELETE', `/api/v1/chatflows/${existing.id}`, { key: writer }),
      403,
      'FORBIDDEN',
    );
    expect((await call(bed, 'GET', `/api/v1/chatflows/${existing.id}`)).status).toBe(200);
  });

  it('a key limited to models may not save nor run a flow on another model', async () => {
    const { key: limited } = await key({ models: ['gpt-4o-mini'] });
    expectFlowError(
      await call(bed, 'POST', '/api/v1/chatflows', {
        key: limited,
        body: { name: 'x', kind: 'llm', model: 'llama3.2' },
      }),
      403,
      'FORBIDDEN',
    );
    const allowed = await createFlow(bed, { name: 'mini', kind: 'llm', model: 'gpt-4o-mini' }, limited);
    expect(allowed.model).toBe('gpt-4o-mini');
    expectFlowError(
      await call(bed, 'PUT', `/api/v1/chatflows/${allowed.id}`, {
        key: limited,
        body: { model: 'llama3.2' },
      }),
      403,
      'FORBIDDEN',
    );
    const onLlama = await createFlow(bed, { name: 'llama', kind: 'llm', model: 'llama3.2' });
    expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${onLlama.id}`, { key: limited, body: { question: 'q' } }),
      403,
      'FORBIDDEN',
    );
    expect((await predict(bed, allowed.id, { question: 'fine' }, limited)).text).toBe('Echo: fine');
  });

  it('customer tokens are refused with 403', async () => {
    const token = await customerToken(bed);
    expectFlowError(await call(bed, 'GET', '/api/v1/chatflows', { key: token }), 403, 'FORBIDDEN');
    expectFlowError(
      await call(bed, 'POST', '/api/v1/chatflows', {
        key: token,
        body: { name: 'x', kind: 'llm', model: 'llama3.2' },
      }),
      403,
      'FORBIDDEN',
    );
  });

  it('chatflows-streaming needs no key and answers only {isStreaming}', async () => {
    const streaming = await createFlow(bed, { name: 's', kind: 'llm', model: 'llama3.2' });
    const plain = await createFlow(bed, { name: 'p', kind: 'llm', model: 'llama3.2', isStreaming: false });
    const a = await call(bed, 'GET', `/api/v1/chatflows-streaming/${streaming.id}`, { key: null });
    expect(a.status, a.text).toBe(200);
    expect(a.json()).toEqual({ isStreaming: true });
    const b = await call(bed, 'GET', `/api/v1/chatflows-streaming/${plain.id}`, { key: null });
    expect(b.json()).toEqual({ isStreaming: false });
  });
});
