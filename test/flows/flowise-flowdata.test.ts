/**
 * Flowise chatflows as `flowData` (issue 36): real marketplace templates from Flowise's repository
 * (test/fixtures/flowise, Apache-2.0) imported unmodified through `POST /api/v1/chatflows`, answering
 * through the prediction route against the fake OpenAI-wire upstream; and the canvases refused at save.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, expectFlowError, expectNamesField, type Flow, lastCall, predict } from './support.js';

const FIXTURES = new URL('../fixtures/flowise/', import.meta.url);
const template = (name: string): string => readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8');

/** The model names the templates' chat-model nodes use, as registry entries on the fake OpenAI. */
const TEMPLATE_MODELS = [
  'gpt-3.5-turbo',
  'gpt-3.5-turbo-16k',
  'gpt-4o',
  'text-davinci-003',
  'claude-2',
  'ggml-gpt4all-j.bin',
];

/** A canvas node as Flowise exports one (only what the adapter reads). */
const node = (id: string, name: string, inputs: Record<string, unknown> = {}) => ({
  id,
  type: 'customNode',
  data: { id, name, inputs },
});
const edge = (source: string, target: string) => ({ source, target, sourceHandle: '', targetHandle: '' });

/** The smallest runnable canvas: a chat model into a conversation chain. */
const conversation = (model = 'gpt-3.5-turbo') => ({
  nodes: [
    node('chatOpenAI_0', 'chatOpenAI', { modelName: model, temperature: 0.5 }),
    node('conversationChain_0', 'conversationChain', {
      model: '{{chatOpenAI_0.data.instance}}',
      systemMessagePrompt: 'Be brief.',
    }),
  ],
  edges: [edge('chatOpenAI_0', 'conversationChain_0')],
});

describe.each(await testDialects())('flows: Flowise flowData on %s', (dialect) => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed(
      dialect,
      {},
      {
        extraModels: (_ollama, openai) =>
          TEMPLATE_MODELS.map((name) => ({
            provider: 'openai',
            baseUrl: openai.url,
            timeoutMs: 2_000,
            name,
            upstreamModel: 'gpt-4o-mini',
          })),
      },
    );
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const importFlow = async (name: string, flowData: string): Promise<Flow & { flowData: string }> => {
    const res = await call(bed, 'POST', '/api/v1/chatflows', { body: { name, flowData, deployed: false } });
    expect(res.status, res.text).toBe(201);
    return res.json() as Flow & { flowData: string };
  };

  it('Simple Conversation Chain: imports, answers with its system message and memory, exports its flowData', async () => {
    const flowData = template('Simple Conversation Chain');
    const flow = await importFlow('Simple Conversation Chain', flowData);
    expect(flow).toMatchObject({ kind: 'llm', model: 'gpt-3.5-turbo-16k', temperature: 0.9 });
    expect(flow.memory.type).toBe('window');
    const first = await predict(bed, flow.id, { question: 'Hello there', sessionId: 's1' });
    expect(first.text).toBe('Echo: Hello there');
    const model = lastCall(bed.openai);
    expect(model.system).toContain('The following is a friendly conversation between a human and an AI.');
    await predict(bed, flow.id, { question: 'Second', sessionId: 's1' });
    expect(lastCall(bed.openai).all).toContain('Hello there');
    const got = await call(bed, 'GET', `/api/v1/chatflows/${flow.id}`);
    expect((got.json() as { flowData: string }).flowData).toBe(flowData);
    // The list leaves canvases out (each may be megabytes): GET by id answers one.
    const list = (await call(bed, 'GET', '/api/v1/chatflows')).json() as Array<Record<string, unknown>>;
    const listed = list.find((f) => f.id === flow.id);
    expect(listed?.name).toBe('Simple Conversation Chain');
    expect(listed).not.toHaveProperty('flowData');
  });

  it('Translator: the chat prompt template with its prompt values (LLM Chain)', async () => {
    const flow = await importFlow('Translator', template('Translator'));
    const answer = await predict(bed, flow.id, { question: 'Good morning' });
    expect(answer.text).toBe('Echo: Good morning');
    const model = lastCall(bed.openai);
    expect(model.system).toBe('You are a helpful assistant that translates English to French.');
    expect(model.user).toBe('Good morning');
  });

  it('Simple LLM Chain: a one-variable prompt template takes the question', async () => {
    const flow = await importFlow('Simple LLM Chain', template('Simple LLM Chain'));
    const answer = await predict(bed, flow.id, { question: 'socks' });
    expect(answer.text).toBe('Echo: What is a good name for a company that makes socks?');
  });

  it('Claude LLM: Anthropic model by registry name, buffer memory, an empty PDF loader', async () => {
    const flow = await importFlow('Claude LLM', template('Claude LLM'));
    expect(flow).toMatchObject({ model: 'claude-2', systemPrompt: '' });
    const answer = await predict(bed, flow.id, { question: 'Summarise it' });
    expect(answer.text).toBe('Echo: Summarise it');
    expect(lastCall(bed.openai).model).toBe('gpt-4o-mini');
  });

  it('Basic ChatGPT 4o Chatbot: chat prompt template in a conversation chain, sticky note ignored', async () => {
    const flow = await importFlow('Basic ChatGPT 4o Chatbot', template('Basic ChatGPT 4o Chatbot'));
    const answer = await predict(bed, flow.id, { question: 'What is a haiku?' });
    expect(answer.text).toBe('Echo: What is a haiku?');
    expect(lastCall(bed.openai).system).toContain('You are a basic ChatGPT 4o chatbot');
  });

  it('Philosophy Coach: its system message and memory across turns of a session', async () => {
    const flow = await importFlow('Philosophy Coach', template('Philosophy Coach'));
    await predict(bed, flow.id, { question: 'Is free will real?', sessionId: 'p1' });
    const second = await predict(bed, flow.id, { question: 'And fate?', sessionId: 'p1' });
    expect(second.text).toBe('Echo: And fate?');
    const sent = lastCall(bed.openai);
    expect(sent.system).toContain('You are a Philosophy Coach');
    expect(sent.all).toContain('Is free will real?');
  });

  it('Conversation Chain: a Redis-backed memory is the flow’s own memory', async () => {
    const flow = await importFlow('Conversation Chain', template('Conversation Chain'));
    expect(flow.memory.type).toBe('window');
    await predict(bed, flow.id, { question: 'My name is Ada', sessionId: 'c1' });
    await predict(bed, flow.id, { question: 'Who am I?', sessionId: 'c1' });
    expect(lastCall(bed.openai).all).toContain('My name is Ada');
  });

  it('Local QnA: its vector store is the flow’s topic; vector upsert fills it and answers cite it', async () => {
    const flow = await importFlow('Local QnA', template('Local QnA'));
    expect(flow.kind).toBe('rag');
    expect(flow.topics).toEqual([`flowise-${flow.id}`]);
    // No memory connected: Flowise's default Buffer Memory.
    expect(flow.memory).toEqual({ type: 'window', windowSize: 50 });
    const empty = await predict(bed, flow.id, { question: 'Where do otters sleep?' });
    expect(empty.sourceDocuments).toEqual([]);
    const upsert = await call(bed, 'POST', `/api/v1/vector/upsert/${flow.id}`, {
      body: { documents: [{ pageContent: 'Sea otters hold hands while they sleep on the water.' }] },
    });
    expect(upsert.status, upsert.text).toBe(200);
    const answer = await predict(bed, flow.id, { question: 'How do otters sleep?' });
    expect(answer.sourceDocuments[0]?.pageContent).toContain('hold hands');
    expect(lastCall(bed.openai).user).toContain('Sea otters hold hands');
  });

  it('overrideConfig addresses node inputs by name or per node, within the flow’s overridable fields', async () => {
    const flowData = JSON.stringify(conversation());
    const res = await call(bed, 'POST', '/api/v1/chatflows', {
      body: { name: 'o', flowData, overridableFields: ['temperature', 'systemPrompt'] },
    });
    expect(res.status, res.text).toBe(201);
    const flow = res.json() as Flow;
    await predict(bed, flow.id, {
      question: 'hi',
      overrideConfig: { temperature: { chatOpenAI_0: 0.1 }, systemMessagePrompt: 'Be loud.' },
    });
    const sent = lastCall(bed.openai);
    expect(sent.body.temperature).toBe(0.1);
    expect(sent.system).toBe('Be loud.');
    const refused = await call(bed, 'POST', `/api/v1/prediction/${flow.id}`, {
      body: { question: 'hi', overrideConfig: { modelName: 'gpt-4o' } },
    });
    expectFlowError(refused, 403, 'FORBIDDEN');
    const stranger = await call(bed, 'POST', `/api/v1/prediction/${flow.id}`, {
      body: { question: 'hi', overrideConfig: { temperature: { nope_9: 0.1 } } },
    });
    expectNamesField(stranger, 'nope_9');
  });

  it('PUT with new flowData converts it again; without, keeps the canvas', async () => {
    const flow = await importFlow('p', JSON.stringify(conversation()));
    const renamed = await call(bed, 'PUT', `/api/v1/chatflows/${flow.id}`, { body: { name: 'renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'renamed', flowData: flow.flowData });
    const next = JSON.stringify(conversation('gpt-4o'));
    const changed = await call(bed, 'PUT', `/api/v1/chatflows/${flow.id}`, { body: { flowData: next } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json()).toMatchObject({ model: 'gpt-4o', flowData: next });
    // A client that PUTs back what GET answered (flowData included) changes nothing.
    const echoed = await call(bed, 'PUT', `/api/v1/chatflows/${flow.id}`, { body: changed.json() });
    expect(echoed.status, echoed.text).toBe(200);
    expect(echoed.json()).toMatchObject({ model: 'gpt-4o', flowData: next });
  });

  it('refuses an unknown node type at save, naming it', async () => {
    const canvas = conversation();
    canvas.nodes.push(node('serpAPI_0', 'serpAPI'), node('zapier_1', 'zapierNLA'));
    const res = await call(bed, 'POST', '/api/v1/chatflows', {
      body: { name: 'u', flowData: JSON.stringify(canvas) },
    });
    expectNamesField(res, 'serpAPI');
    expect(res.text).toContain('zapierNLA');
  });

  it('refuses a cycle, naming its nodes', async () => {
    const canvas = conversation();
    canvas.nodes.push(node('bufferMemory_0', 'bufferMemory'));
    canvas.edges.push(edge('conversationChain_0', 'bufferMemory_0'), edge('bufferMemory_0', 'chatOpenAI_0'));
    const res = await call(bed, 'POST', '/api/v1/chatflows', {
      body: { name: 'c', flowData: JSON.stringify(canvas) },
    });
    expectNamesField(res, 'cycle');
    expect(res.text).toContain('bufferMemory_0');
  });

  it('refuses 10,000 nodes quickly, with the cap', async () => {
    const nodes = Array.from({ length: 10_000 }, (_, i) => node(`chatOpenAI_${i}`, 'chatOpenAI'));
    const started = performance.now();
    const res = await call(bed, 'POST', '/api/v1/chatflows', {
      body: { name: 'big', flowData: JSON.stringify({ nodes, edges: [] }) },
    });
    expectNamesField(res, 'flowData');
    expect(res.text).toContain('at most 200');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses what cannot run: not JSON, no chain at the end, a model not in the registry, a bad edge', async () => {
    const post = (flowData: string) =>
      call(bed, 'POST', '/api/v1/chatflows', { body: { name: 'bad', flowData } });
    expectNamesField(await post('{nodes'), 'flowData');
    expectNamesField(await post(JSON.stringify({ nodes: [], edges: [] })), 'flowData');
    const noChain = { nodes: [node('chatOpenAI_0', 'chatOpenAI', { modelName: 'gpt-4o' })], edges: [] };
    expectNamesField(await post(JSON.stringify(noChain)), 'chain');
    expectNamesField(await post(JSON.stringify(conversation('no-such-model'))), 'model');
    const dangling = conversation();
    dangling.edges.push(edge('ghost_0', 'conversationChain_0'));
    expectNamesField(await post(JSON.stringify(dangling)), 'flowData.edges[1]');
  });
});
