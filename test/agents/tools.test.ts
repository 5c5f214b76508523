import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { echoReply, type FakeLlmServer } from '../support/fake-llm/index.js';
import { createWorkflow, flow as workflowBody } from '../workflows/support.js';
import {
  type Agent,
  call,
  chatCalls,
  createAgent,
  createConversation,
  deltasOf,
  type Message,
  type ModelCall,
  offeredName,
  type Step,
  scriptToolCalls,
  seedTopic,
  send,
  sseEvents,
  textOf,
  toolCallsThenText,
} from './support.js';

const MODELS = [
  { model: 'llama3.2', fake: 'ollama' },
  { model: 'gpt-4o-mini', fake: 'openai' },
] as const;

/** The tool results a chat call carried back to the model (role `tool`), parsed when JSON. */
function toolResults(
  call: ModelCall | undefined,
): Array<{ message: Record<string, unknown>; output: unknown }> {
  return (call?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => {
      const text = textOf(m.content);
      let output: unknown = text;
      try {
        output = JSON.parse(text);
      } catch {
        // Plain text is a valid tool result too.
      }
      return { message: m, output };
    });
}

const toolSteps = (message: Message): Step[] => message.steps.filter((s) => s.type === 'tool_call');

describe.each(await testDialects())('agents: tools on %s', (dialect) => {
  let bed: LlmTestbed;
  let docIds: string[];
  let workflowId: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    docIds = await seedTopic(bed, 'kb');
    workflowId = await createWorkflow(
      bed.p,
      workflowBody('order lookup', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'agent-order-lookup', responseMode: 'lastNode' },
        },
        {
          name: 'Set',
          type: 'set',
          parameters: {
            keepOnlySet: true,
            values: { order: '={{ $json.body.orderId }}', status: 'shipped' },
          },
        },
      ]),
    );
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.ollama.reset();
    bed.openai.reset();
  });

  const fakeOf = (name: 'ollama' | 'openai'): FakeLlmServer => bed[name];

  describe.each(MODELS)('on $model', ({ model, fake: fakeName }) => {
    let fake: FakeLlmServer;
    beforeEach(() => {
      fake = fakeOf(fakeName);
    });

    it('knowledge_search: offered with its schema; the call, its result sent back (role tool), then the answer', async () => {
      const agent = await createAgent(bed, { model, knowledgeTopics: ['kb'], tools: ['knowledge_search'] });
      toolCallsThenText(fake, {
        name: 'knowledge_search',
        arguments: { query: 'sourdough starter wild yeast' },
      });
      const turn = await send(bed, agent.id, { content: 'How do I keep my starter alive?' });
      const calls = chatCalls(fake);
      expect(calls).toHaveLength(2);
      // Offered as a function with the contract's argument schema.
      const offered = calls[0]?.tools.find((t) => t.name === 'knowledge_search');
      expect(offered?.description).toEqual(expect.any(String));
      expect(offered?.parameters).toMatchObject({
        type: 'object',
        properties: { query: expect.objectContaining({ type: 'string' }) },
        required: ['query'],
      });
      // The second call carries the model's tool call and the result, in this product's format.
      const second = calls[1] as ModelCall;
      const assistant = second.messages.find((m) => m.role === 'assistant' && m.tool_calls);
      expect(assistant, JSON.stringify(second.messages)).toBeDefined();
      const sent = (
        (assistant?.tool_calls ?? []) as Array<{
          id?: string;
          function: { name: string; arguments: unknown };
        }>
      )[0];
      expect(sent?.function.name).toBe('knowledge_search');
      const [result] = toolResults(second);
      if (model === 'gpt-4o-mini') {
        // OpenAI: arguments are a JSON string; the result answers the call by its id.
        expect(sent?.id).toBe('call_fake_0');
        expect(JSON.parse(sent?.function.arguments as string)).toEqual({
          query: 'sourdough starter wild yeast',
        });
        expect(result?.message.tool_call_id).toBe('call_fake_0');
      } else {
        // Ollama: arguments are an object.
        expect(sent?.function.arguments).toEqual({ query: 'sourdough starter wild yeast' });
      }
      expect(result?.output).toMatchObject({ results: expect.any(Array) });
      const results =
        (result?.output as { results?: Array<{ documentId: string; text: string }> } | undefined)?.results ??
        [];
      expect(results[0]?.documentId).toBe(docIds[2]);
      expect(results[0]?.text).toContain('starter');
      // The answer, the steps (with their times) and the sources.
      const [, answer] = turn.messages;
      expect(answer.content).toBe(echoReply('How do I keep my starter alive?'));
      expect(answer.steps.map((s) => s.type)).toEqual(['retrieval', 'model', 'tool_call', 'model']);
      expect(toolSteps(answer)[0]).toEqual({
        type: 'tool_call',
        name: 'knowledge_search',
        input: { query: 'sourdough starter wild yeast' },
        output: { results: expect.any(Array) },
        ms: expect.any(Number),
      });
      for (const step of answer.steps) expect(step.ms).toBeGreaterThanOrEqual(0);
      expect(turn.sources.map((s) => s.documentId)).toContain(docIds[2]);
    });

    it('streams tool.call and tool.result between message.created and the answer', async () => {
      const agent = await createAgent(bed, { model, knowledgeTopics: ['kb'], tools: ['knowledge_search'] });
      toolCallsThenText(fake, { name: 'knowledge_search', arguments: { query: 'lighthouse keepers' } });
      const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
        body: { content: 'Who lived in the tower?', stream: true },
      });
      expect(res.status, res.text).toBe(200);
      const events = sseEvents(res.text);
      const types = events.map((e) => e.event);
      expect(types.slice(0, 3)).toEqual(['message.created', 'tool.call', 'tool.result']);
      expect(types.at(-1)).toBe('message.completed');
      expect(types.slice(3, -1).every((t) => t === 'message.delta')).toBe(true);
      const [toolCall, toolResult] = [events[1]?.data, events[2]?.data];
      expect(toolCall).toMatchObject({
        id: expect.any(String),
        name: 'knowledge_search',
        arguments: { query: 'lighthouse keepers' },
      });
      expect(toolResult).toMatchObject({
        id: toolCall?.id,
        name: 'knowledge_search',
        output: { results: expect.any(Array) },
      });
      const completed = events.at(-1)?.data as { message: Message };
      expect(deltasOf(events)).toBe(completed.message.content);
      expect(toolSteps(completed.message)).toHaveLength(1);
    });

    it('invalid arguments: the step records the error and the model gets it as the tool result', async () => {
      const agent = await createAgent(bed, { model, knowledgeTopics: ['kb'], tools: ['knowledge_search'] });
      toolCallsThenText(fake, { name: 'knowledge_search', arguments: { topK: 99 } });
      const turn = await send(bed, agent.id, { content: 'search badly' });
      const [step] = toolSteps(turn.messages[1]);
      expect(step).toMatchObject({ type: 'tool_call', name: 'knowledge_search', input: { topK: 99 } });
      const error = JSON.stringify(step?.output);
      expect(error).toMatch(/error/i);
      expect(error).toMatch(/query|topK/);
      expect(step?.output).not.toHaveProperty('results');
      const [result] = toolResults(chatCalls(fake)[1]);
      expect(JSON.stringify(result?.output)).toBe(error);
      // The turn still ends with an answer.
      expect(turn.messages[1].content).toBe(echoReply('search badly'));
    });

    it('maxToolCalls reached while the model keeps calling tools: one last call without tools answers', async () => {
      const agent = await createAgent(bed, {
        model,
        knowledgeTopics: ['kb'],
        tools: ['knowledge_search'],
        maxToolCalls: 2,
      });
      // A model that calls a tool whenever it is offered one.
      scriptToolCalls(fake, ({ call: current }) =>
        current.tools.length > 0 ? { name: 'knowledge_search', arguments: { query: 'otters' } } : null,
      );
      const turn = await send(bed, agent.id, { content: 'loop forever' });
      const calls = chatCalls(fake);
      expect(calls).toHaveLength(3);
      expect(calls.map((c) => c.tools.length > 0)).toEqual([true, true, false]);
      const [, answer] = turn.messages;
      expect(answer.content).toBe(echoReply('loop forever'));
      expect(answer.steps.map((s) => s.type)).toEqual([
        'retrieval',
        'model',
        'tool_call',
        'model',
        'tool_call',
        'model',
      ]);
      for (const step of answer.steps) expect(step.ms).toEqual(expect.any(Number));
      // Both results went back to the model before the last call.
      expect(toolResults(calls[2])).toHaveLength(2);
    });
  });

  it('maxToolCalls 0: tools are never offered', async () => {
    const agent = await createAgent(bed, {
      model: 'llama3.2',
      knowledgeTopics: ['kb'],
      tools: ['knowledge_search'],
      maxToolCalls: 0,
    });
    bed.ollama.toolCall = { name: 'knowledge_search', arguments: { query: 'x' } };
    const turn = await send(bed, agent.id, { content: 'no tools for you' });
    const calls = chatCalls(bed.ollama);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.tools).toEqual([]);
    expect(toolSteps(turn.messages[1])).toEqual([]);
  });

  it('a tool the agent does not have: the model is told, nothing runs', async () => {
    const agent = await createAgent(bed, {
      model: 'llama3.2',
      knowledgeTopics: ['kb'],
      tools: ['knowledge_search'],
    });
    toolCallsThenText(bed.ollama, { name: 'drop_tables', arguments: {} });
    const turn = await send(bed, agent.id, { content: 'do something odd' });
    const [step] = toolSteps(turn.messages[1]);
    expect(JSON.stringify(step?.output)).toMatch(/error/i);
    expect(JSON.stringify(toolResults(chatCalls(bed.ollama)[1])[0]?.output)).toMatch(/drop_tables/);
  });

  describe('user_profile', () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = await createAgent(bed, { model: 'gpt-4o-mini', tools: ['user_profile'] });
    });

    it('answers the profile of the conversation’s user', async () => {
      const created = await call(bed, 'POST', '/api/users', {
        body: { userId: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', registrationSource: 'web' },
      });
      expect([200, 201], created.text).toContain(created.status);
      const conv = await createConversation(bed, { agentId: agent.id, userId: 'ada' });
      toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
      const turn = await send(bed, agent.id, { conversationId: conv.id, content: 'who am I?' });
      const offered = chatCalls(bed.openai)[0]?.tools.find((t) => t.name === 'user_profile');
      expect(offered?.parameters).toMatchObject({ type: 'object' });
      const [step] = toolSteps(turn.messages[1]);
      expect(step?.name).toBe('user_profile');
      const said = JSON.stringify(step?.output);
      expect(said).toContain('ada@example.com');
      expect(said).toContain('Ada Lovelace');
      expect(JSON.stringify(toolResults(chatCalls(bed.openai)[1])[0]?.output)).toContain('ada@example.com');
    });

    it('answers {found: false} for a user without a profile', async () => {
      const conv = await createConversation(bed, { agentId: agent.id, userId: 'nobody-here' });
      toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
      const turn = await send(bed, agent.id, { conversationId: conv.id, content: 'who am I?' });
      expect(toolSteps(turn.messages[1])[0]?.output).toMatchObject({ found: false });
    });
  });

  it('blend_recommendations answers {recommendations} for the conversation’s user and filters', async () => {
    const agent = await createAgent(bed, { model: 'llama3.2', tools: ['blend_recommendations'] });
    const conv = await createConversation(bed, { agentId: agent.id, userId: 'shopper-blend' });
    toolCallsThenText(bed.ollama, {
      name: 'blend_recommendations',
      arguments: { mood: 'fresh', occasion: 'office' },
    });
    const turn = await send(bed, agent.id, { conversationId: conv.id, content: 'suggest a blend' });
    const offered = chatCalls(bed.ollama)[0]?.tools.find((t) => t.name === 'blend_recommendations');
    expect(Object.keys((offered?.parameters?.properties as object) ?? {}).sort()).toEqual([
      'category',
      'mood',
      'occasion',
    ]);
    const [step] = toolSteps(turn.messages[1]);
    expect(step).toMatchObject({
      name: 'blend_recommendations',
      input: { mood: 'fresh', occasion: 'office' },
    });
    expect(step?.output).toMatchObject({ recommendations: expect.any(Array) });
    const recommendations =
      (step?.output as { recommendations?: Array<Record<string, unknown>> } | undefined)?.recommendations ??
      [];
    expect(recommendations.length).toBeGreaterThan(0);
    expect(recommendations[0]).toMatchObject({ id: expect.any(String), name: expect.any(String) });
  });

  describe.each(MODELS)('workflow:<id> on $model', ({ model, fake: fakeName }) => {
    it('offers the tool with its description and schema, runs the workflow (mode agent) with the arguments', async () => {
      const fake = fakeOf(fakeName);
      const parameters = {
        type: 'object',
        properties: { orderId: { type: 'string', description: 'The order number' } },
        required: ['orderId'],
      };
      const agent = await createAgent(bed, {
        model,
        tools: [{ name: `workflow:${workflowId}`, description: 'Looks up an order', parameters }],
      });
      scriptToolCalls(fake, ({ index, call: current }) =>
        index === 0
          ? { name: offeredName(current, `workflow:${workflowId}`), arguments: { orderId: 'A-17' } }
          : null,
      );
      const before = await executions();
      const turn = await send(bed, agent.id, { content: 'where is my order A-17?' });
      const offered = chatCalls(fake)[0]?.tools.find((t) => t.name.includes(workflowId));
      expect(offered).toMatchObject({ description: 'Looks up an order', parameters });
      const [step] = toolSteps(turn.messages[1]);
      expect(step).toMatchObject({
        name: `workflow:${workflowId}`,
        input: { orderId: 'A-17' },
        ms: expect.any(Number),
      });
      expect(JSON.stringify(step?.output)).toContain('A-17');
      expect(JSON.stringify(step?.output)).toContain('shipped');
      expect(JSON.stringify(toolResults(chatCalls(fake)[1])[0]?.output)).toContain('shipped');
      // The run is an ordinary execution, with mode agent.
      const after = await executions();
      const added = after.filter((e) => !before.some((b) => b.id === e.id));
      expect(added).toEqual([expect.objectContaining({ mode: 'agent' })]);
    });
  });

  it('a workflow tool without parameters accepts any object; a schema violation never runs the workflow', async () => {
    const strict = await createAgent(bed, {
      model: 'llama3.2',
      tools: [
        {
          name: `workflow:${workflowId}`,
          parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        },
      ],
    });
    scriptToolCalls(bed.ollama, ({ index, call: current }) =>
      index === 0 ? { name: offeredName(current, `workflow:${workflowId}`), arguments: { order: 5 } } : null,
    );
    const before = await executions();
    const turn = await send(bed, strict.id, { content: 'bad order lookup' });
    const [step] = toolSteps(turn.messages[1]);
    expect(JSON.stringify(step?.output)).toMatch(/orderId/);
    expect(await executions()).toHaveLength(before.length);

    bed.ollama.reset();
    const loose = await createAgent(bed, { model: 'llama3.2', tools: [`workflow:${workflowId}`] });
    scriptToolCalls(bed.ollama, ({ index, call: current }) =>
      index === 0
        ? { name: offeredName(current, `workflow:${workflowId}`), arguments: { orderId: 'B-2', extra: [1] } }
        : null,
    );
    const offeredSchema = async () => chatCalls(bed.ollama)[0]?.tools[0]?.parameters;
    const ok = await send(bed, loose.id, { content: 'loose order lookup' });
    expect(await offeredSchema()).toMatchObject({ type: 'object' });
    expect(JSON.stringify(toolSteps(ok.messages[1])[0]?.output)).toContain('B-2');
  });

  it('a workflow that fails: its error is the tool result the model reads, and the turn still answers', async () => {
    const failing = await createWorkflow(
      bed.p,
      workflowBody('failing tool', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'agent-failing-tool', responseMode: 'lastNode' },
        },
        { name: 'Fail', type: 'stopAndError', parameters: { errorMessage: 'warehouse offline' } },
      ]),
    );
    const agent = await createAgent(bed, { model: 'llama3.2', tools: [`workflow:${failing}`] });
    scriptToolCalls(bed.ollama, ({ index, call: current }) =>
      index === 0
        ? { name: offeredName(current, `workflow:${failing}`), arguments: { orderId: 'C-3' } }
        : null,
    );
    const turn = await send(bed, agent.id, { content: 'check the warehouse' });
    const [step] = toolSteps(turn.messages[1]);
    expect(JSON.stringify(step?.output)).toMatch(/error/i);
    expect(JSON.stringify(toolResults(chatCalls(bed.ollama)[1])[0]?.output)).toMatch(/error/i);
    expect(turn.messages[1].content).toBe(echoReply('check the warehouse'));
  });

  async function executions(): Promise<Array<{ id: string; mode: string }>> {
    const res = await call(bed, 'GET', `/api/v1/executions?workflowId=${workflowId}&limit=100`);
    expect(res.status, res.text).toBe(200);
    return (res.json() as { data: Array<{ id: string; mode: string }> }).data;
  }
});
