import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import {
  anthropicText,
  anthropicToolUse,
  FakeAiUpstream,
  ollamaText,
  ollamaToolCalls,
} from './support/fake-ai-upstream.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { loadFixture, type N8nExport, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's AI workflows beyond the AI Agent v3 set (test/fixtures/n8n/agent and ai/, sources in
 * SOURCES-ai.md), run unmodified against local OpenAI, Anthropic and Ollama upstreams speaking their
 * real wire formats, with the answers n8n's own tests mock where those tests exist.
 */

const openai = new FakeOpenAi();
const anthropic = new FakeAiUpstream('/v1/messages');
const ollama = new FakeAiUpstream('/api/chat');
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await Promise.all([openai.start(), anthropic.start(), ollama.start()]);
  const hosts = [openai.base, anthropic.base, ollama.base].map((b) => new URL(b).host);
  const http = createOutboundHttp({ allowHosts: hosts, timeoutMs: 10_000 });
  deps = {
    http,
    tenant: 'acct_fixture_ai',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === '123') return { apiKey: 'test-api-key', url: `${openai.base}/v1` };
      if (id === '<REPLACE_ME>' || id === 'anthropic') return { apiKey: 'sk-ant-test', url: anthropic.base };
      if (id === 'ollama') return { baseUrl: ollama.base };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => Promise.all([openai.stop(), anthropic.stop(), ollama.stop()]));
beforeEach(() => {
  openai.reset();
  anthropic.reset();
  ollama.reset();
});

const chatItem = (chatInput: string) => ({
  json: { sessionId: 'session-1', action: 'sendMessage', chatInput },
});

describe('n8n AI fixtures: agents as tools', () => {
  it('agent-tool-v3-basic: the parent calls the sub-agent, whose answer comes back', async () => {
    openai.queue(
      toolCalls([{ id: 'call_1', name: 'SubAgent', arguments: JSON.stringify({ input: 'What is 2+2?' }) }]),
      completion('2+2 equals 4.'),
      completion('2+2 equals 4.'),
    );
    const { outcome, outputs } = await runFixture(loadFixture('agent/agent-tool-v3-basic.json'), deps);
    expect(outcome.status).toBe('success');
    expect(outputs['Parent Agent']).toEqual([{ output: '2+2 equals 4.' }]);
    expect(openai.pending()).toBe(0);
    // The sub-agent got the parent's argument as its prompt; the parent read its answer as the tool result.
    expect(((openai.requests[1]?.messages ?? []) as Array<{ content: string }>).at(-1)?.content).toBe(
      'What is 2+2?',
    );
    const last = ((openai.requests[2]?.messages ?? []) as Array<Record<string, unknown>>).at(-1);
    expect(last).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '2+2 equals 4.' });
  });

  it('sub-agent-with-inner-tool: the sub-agent runs its own calculator inline', async () => {
    openai.queue(
      toolCalls([
        {
          id: 'call_parent_1',
          name: 'MathSubAgent',
          arguments: JSON.stringify({ input: 'What is 5 times 5?' }),
        },
      ]),
      toolCalls([{ id: 'call_calc_1', name: 'Calculator', arguments: JSON.stringify({ input: '5 * 5' }) }]),
      completion('5 times 5 equals 25.'),
      completion('5 times 5 equals 25.'),
    );
    const { outcome, outputs } = await runFixture(loadFixture('agent/sub-agent-with-inner-tool.json'), deps);
    expect(outcome.status).toBe('success');
    expect(outputs['Parent Agent']).toEqual([{ output: '5 times 5 equals 25.' }]);
    const calc = ((openai.requests[2]?.messages ?? []) as Array<Record<string, unknown>>).at(-1);
    expect(calc).toEqual({ role: 'tool', tool_call_id: 'call_calc_1', content: '25' });
  });
});

describe('n8n AI fixtures: Chat Trigger and the Anthropic Chat Model', () => {
  it('Workflow_ai_agent: chat input → agent v2.2 on Claude over the Messages API', async () => {
    anthropic.queue(anthropicText('Hello! How can I help?'));
    const { outcome, outputs } = await runFixture(loadFixture('ai/Workflow_ai_agent.json'), deps, [
      chatItem('Hi'),
    ]);
    // The export has no credential on the model: n8n refuses it the same way.
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toContain('No anthropicApi credential');
    expect(outputs['When chat message received']).toEqual([chatItem('Hi').json]);
    expect(anthropic.requests).toHaveLength(0);
  });

  it('chat-hub-workflow-agent: system message apart, the key in x-api-key, the answer as output', async () => {
    anthropic.queue(anthropicText('Bonjour !'));
    const { outcome, outputs } = await runFixture(loadFixture('ai/chat-hub-workflow-agent.json'), deps, [
      chatItem('Hello'),
    ]);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'Bonjour !' }]);
    const req = anthropic.requests[0];
    expect(req?.headers['x-api-key']).toBe('sk-ant-test');
    expect(req?.headers['anthropic-version']).toBe('2023-06-01');
    expect(req?.body).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      system: 'Reply in French',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(typeof req?.body.max_tokens).toBe('number');
  });

  it.each([
    ['ai/Test_chat_partial_execution.json', 'Edit Fields2', { text: 'Set 3 with chatInput: Hi' }],
    ['ai/chat-trigger-public-chat.json', 'Edit Fields', { response: 'Echo: Hi' }],
    [
      'ai/Test_workflow_chat_partial_execution.json',
      'Node 2',
      { this_my_field_3: 'value', this_my_field_4: 1 },
    ],
  ])('%s runs from the chat item', async (file, node, expected) => {
    const { outcome, outputs } = await runFixture(loadFixture(file), deps, [chatItem('Hi')]);
    expect(outcome.status).toBe('success');
    expect(outputs[node]?.[0]).toMatchObject(expected);
  });
});

/** An agent on one chat model with the calculator (and more tools), as an n8n export holds it. */
function agentWorkflow(
  model: Record<string, unknown>,
  tools: Array<Record<string, unknown>> = [],
): N8nExport {
  const toolNodes: Array<Record<string, unknown>> = [
    { name: 'Calculator', type: '@n8n/n8n-nodes-langchain.toolCalculator', typeVersion: 1, parameters: {} },
    ...tools,
  ].map((t, i) => ({ id: `tool-${i}`, position: [400, 200] as [number, number], ...t }));
  const connections: Record<string, unknown> = {
    Trigger: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
    Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
  };
  for (const t of toolNodes)
    connections[String(t.name)] = { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] };
  return {
    id: 'wf_ai_hand',
    name: 'hand-built',
    nodes: [
      {
        id: 't',
        name: 'Trigger',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'a',
        name: 'AI Agent',
        type: '@n8n/n8n-nodes-langchain.agent',
        typeVersion: 3.1,
        position: [200, 0],
        parameters: { promptType: 'define', text: 'What is 6 times 7?', options: { maxIterations: 3 } },
      },
      { id: 'm', name: 'Model', position: [200, 200], ...model },
      ...toolNodes,
    ],
    connections,
  } as unknown as N8nExport;
}

const OLLAMA_MODEL = {
  type: '@n8n/n8n-nodes-langchain.lmChatOllama',
  typeVersion: 1,
  parameters: { model: 'llama3.2', options: { temperature: 0.2, numCtx: 4096 } },
  credentials: { ollamaApi: { id: 'ollama', name: 'Ollama account' } },
};
const ANTHROPIC_MODEL = {
  type: '@n8n/n8n-nodes-langchain.lmChatAnthropic',
  typeVersion: 1.3,
  parameters: { model: { __rl: true, mode: 'list', value: 'claude-sonnet-4-5-20250929' }, options: {} },
  credentials: { anthropicApi: { id: 'anthropic', name: 'Anthropic account' } },
};

describe('Ollama and Anthropic chat models: tool calls on their own wire formats', () => {
  it('Ollama: object arguments, the result as a tool turn with the tool name, options as Ollama names', async () => {
    ollama.queue(ollamaToolCalls([{ name: 'calculator', arguments: { input: '6*7' } }]), ollamaText('42.'));
    const { outcome, outputs } = await runFixture(agentWorkflow(OLLAMA_MODEL), deps);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: '42.' }]);
    const first = ollama.requests[0]?.body ?? {};
    expect(first).toMatchObject({
      model: 'llama3.2',
      stream: false,
      options: { temperature: 0.2, num_ctx: 4096 },
    });
    expect((first.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual([
      'calculator',
    ]);
    const turns = (ollama.requests[1]?.body.messages ?? []) as Array<Record<string, unknown>>;
    expect(turns.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ function: { name: 'calculator' } }],
    });
    expect(turns.at(-1)).toEqual({ role: 'tool', content: '42', tool_name: 'calculator' });
  });

  it('Anthropic: tool_use in, tool_result out in one user turn', async () => {
    anthropic.queue(
      anthropicToolUse([{ id: 'toolu_1', name: 'calculator', input: { input: '6*7' } }]),
      anthropicText('It is 42.'),
    );
    const { outcome, outputs } = await runFixture(agentWorkflow(ANTHROPIC_MODEL), deps);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'It is 42.' }]);
    const tools = anthropic.requests[0]?.body.tools as Array<Record<string, unknown>>;
    expect(tools[0]).toMatchObject({ name: 'calculator', input_schema: { type: 'object' } });
    const turns = (anthropic.requests[1]?.body.messages ?? []) as Array<Record<string, unknown>>;
    expect(turns.at(-2)).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'calculator', input: { input: '6*7' } }],
    });
    expect(turns.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '42' }],
    });
  });
});

describe('AI nodes: bad input', () => {
  it('an Anthropic upstream answering garbage or an error fails the node with a clear message', async () => {
    anthropic.queue({ status: 200, body: 'not json at all' });
    const garbage = await runFixture(agentWorkflow(ANTHROPIC_MODEL), deps);
    expect(garbage.outcome.status).toBe('error');
    expect(garbage.outcome.state.error?.message).toContain('Anthropic');
    anthropic.queue({
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const refused = await runFixture(agentWorkflow(ANTHROPIC_MODEL), deps);
    expect(refused.outcome.state.error?.message).toBe(
      'Anthropic refused the request (401): invalid x-api-key',
    );
  });

  it('Ollama tool arguments that are not an object: the model is told, its next answer stands', async () => {
    ollama.queue(ollamaToolCalls([{ name: 'calculator', arguments: '6*' }]), ollamaText('Sorry.'));
    const { outcome, outputs } = await runFixture(agentWorkflow(OLLAMA_MODEL), deps);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'Sorry.' }]);
    const told = ((ollama.requests[1]?.body.messages ?? []) as Array<{ content: string }>).at(-1);
    expect(told?.content).toContain('the arguments are not a JSON object');
  });

  it('$fromAI: hostile values stay data, wrong types and unknown keys are told to the model', async () => {
    const subAgent = {
      name: 'Researcher',
      type: '@n8n/n8n-nodes-langchain.agentTool',
      typeVersion: 3,
      parameters: {
        toolDescription: 'Answers one question',
        text: "={{ 'Q' + $fromAI('count', 'how many', 'number') + ': ' + $fromAI('question', 'the question', 'string') }}",
      },
    };
    const def = agentWorkflow(OLLAMA_MODEL, [subAgent]);
    def.connections.Model = {
      ai_languageModel: [
        [
          { node: 'AI Agent', type: 'ai_languageModel', index: 0 },
          { node: 'Researcher', type: 'ai_languageModel', index: 0 },
        ],
      ],
    };
    const hostile = "{{ $env }}'); globalThis.process.exit(1); ('";
    ollama.queue(
      ollamaToolCalls([{ name: 'Researcher', arguments: { count: 'many', question: 'x' } }]),
      ollamaToolCalls([{ name: 'Researcher', arguments: { count: 2, question: hostile } }]),
      ollamaText('inner answer'),
      ollamaText('done'),
    );
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'done' }]);
    const offered = (ollama.requests[0]?.body.tools ?? []) as Array<{
      function: { name: string; parameters: unknown };
    }>;
    expect(offered.find((t) => t.function.name === 'Researcher')?.function.parameters).toEqual({
      type: 'object',
      properties: {
        count: { type: 'number', description: 'how many' },
        question: { type: 'string', description: 'the question' },
      },
      required: ['count', 'question'],
    });
    const wrongType = ((ollama.requests[1]?.body.messages ?? []) as Array<{ content: string }>).at(-1);
    expect(wrongType?.content).toContain("the argument 'count' must be a number");
    // The inner agent's prompt is the hostile text, verbatim: never evaluated.
    const inner = ((ollama.requests[2]?.body.messages ?? []) as Array<{ role: string; content: string }>).at(
      -1,
    );
    expect(inner).toEqual({ role: 'user', content: `Q2: ${hostile}` });
  });
});

describe('n8n AI fixtures: images and two triggers', () => {
  it('agent-v3-binary-images: the item image goes with the prompt as an image_url part', async () => {
    openai.queue(completion('A red pixel.'));
    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    const { outcome, outputs } = await runFixture(loadFixture('agent/agent-v3-binary-images.json'), deps, [
      {
        json: { chatInput: 'What is in this image?' },
        binary: { data: { data: png, mimeType: 'image/png', fileName: 'a.png' } },
      },
    ]);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'A red pixel.' }]);
    const user = ((openai.requests[0]?.messages ?? []) as Array<Record<string, unknown>>).at(-1);
    expect(user).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      ],
    });
  });

  it('Test_chat_trigger_multiple_triggers: a chat message runs from the chat trigger', async () => {
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/Test_chat_trigger_multiple_triggers.json'),
      deps,
      [chatItem('Hi')],
    );
    expect(outcome.status).toBe('success');
    expect(outputs['Edit Fields']).toEqual([{ response: 'Response to: Hi' }]);
  });
});

function chainWorkflow(
  chain: Record<string, unknown>,
  sub: Record<string, unknown>,
  subType: string,
): N8nExport {
  return {
    id: 'wf_chain',
    name: 'chain',
    nodes: [
      {
        id: 't',
        name: 'Trigger',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      { id: 'c', name: 'Chain', position: [200, 0], ...chain },
      { id: 'm', name: 'Model', position: [200, 200], ...OLLAMA_MODEL },
      { id: 's', name: 'Sub', position: [400, 200], ...sub },
    ],
    connections: {
      Trigger: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] },
      Model: {
        ai_languageModel: [[{ node: 'Chain', type: 'ai_languageModel', index: 0 }]],
      },
      Sub: { [subType]: [[{ node: 'Chain', type: subType, index: 0 }]] },
    },
  } as unknown as N8nExport;
}

describe('Basic LLM Chain and the Code tool', () => {
  it('chainLlm: system message then the prompt, answered as {text}; with a parser, as {output}', async () => {
    ollama.queue(ollamaText('Paris'));
    const def = chainWorkflow(
      {
        type: '@n8n/n8n-nodes-langchain.chainLlm',
        typeVersion: 1.7,
        parameters: {
          promptType: 'define',
          text: 'Capital of France?',
          messages: { messageValues: [{ message: 'One word only.' }] },
        },
      },
      { type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
      'main',
    );
    def.connections.Sub = {};
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.status).toBe('success');
    expect(outputs.Chain).toEqual([{ text: 'Paris' }]);
    expect(ollama.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'One word only.' },
      { role: 'user', content: 'Capital of France?' },
    ]);

    ollama.queue(ollamaText('{"city":"Paris"}'));
    const parsed = chainWorkflow(
      {
        type: '@n8n/n8n-nodes-langchain.chainLlm',
        typeVersion: 1.7,
        parameters: { promptType: 'define', text: 'Capital of France?', hasOutputParser: true },
      },
      {
        type: '@n8n/n8n-nodes-langchain.outputParserStructured',
        typeVersion: 1.2,
        parameters: { jsonSchemaExample: '{"city":"Rome"}' },
      },
      'ai_outputParser',
    );
    const second = await runFixture(parsed, deps);
    expect(second.outcome.status).toBe('success');
    expect(second.outputs.Chain).toEqual([{ output: { city: 'Paris' } }]);
  });

  it('toolCode: the query reaches the sandboxed code, its answer the model; a runaway loop is stopped', async () => {
    const codeTool = {
      name: 'Shout',
      type: '@n8n/n8n-nodes-langchain.toolCode',
      typeVersion: 1.1,
      parameters: { name: 'shout', description: 'Upper-cases text', jsCode: 'return query.toUpperCase();' },
    };
    const loopTool = {
      name: 'Spin',
      type: '@n8n/n8n-nodes-langchain.toolCode',
      typeVersion: 1.1,
      parameters: { name: 'spin', description: 'Never ends', jsCode: 'while (true) {}' },
    };
    ollama.queue(
      ollamaToolCalls([{ name: 'shout', arguments: { query: "hi'); process.exit(1); ('" } }]),
      ollamaToolCalls([{ name: 'spin', arguments: { query: 'x' } }]),
      ollamaText('done'),
    );
    const started = Date.now();
    const { outcome, outputs } = await runFixture(agentWorkflow(OLLAMA_MODEL, [codeTool, loopTool]), {
      ...deps,
      codeTimeoutMs: 500,
    });
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'done' }]);
    const shout = ((ollama.requests[1]?.body.messages ?? []) as Array<{ content: string }>).at(-1);
    expect(shout?.content).toBe("HI'); PROCESS.EXIT(1); ('");
    const spin = ((ollama.requests[2]?.body.messages ?? []) as Array<{ content: string }>).at(-1);
    expect(spin?.content).toMatch(/error/i);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('Chat Trigger: what is not served is refused at save', () => {
  it("loadPreviousSession 'manually' is a validation problem naming the option", async () => {
    const def = loadFixture('ai/chat-trigger-public-chat.json');
    const trigger = def.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger');
    if (!trigger) throw new Error('the fixture has no chat trigger');
    trigger.parameters = { public: true, options: { loadPreviousSession: 'manually' } };
    await expect(runFixture(def, deps, [chatItem('Hi')])).rejects.toThrow(
      /options\.loadPreviousSession.*'manually' is not supported here/,
    );
  });
});
