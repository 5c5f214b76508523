import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps, WorkflowDefinition } from '../../src/modules/workflows/engine/types.js';
import { validateWorkflow } from '../../src/modules/workflows/engine/validate.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * Real n8n template exports (test/fixtures/n8n/templates/, sources in SOURCES-templates.md) imported
 * unmodified and run against a local OpenAI upstream, plus AI Agent v1.x in n8n's export shape for the
 * agent types and prompt defaults templates do not cover.
 */

const fake = new FakeOpenAi();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await fake.start();
  const http = createOutboundHttp({ allowHosts: [new URL(fake.base).host], timeoutMs: 10_000 });
  const cred = { apiKey: 'template-key', url: `${fake.base}/v1` };
  deps = { http, tenant: 'acct_templates', credential: async () => cred };
});
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

type Message = { role: string; content?: string | null; tool_call_id?: string };
const messagesOf = (i: number) => (fake.requests[i]?.messages ?? []) as Message[];

describe('n8n templates with AI Agent v1.x', () => {
  it('agent v1.8 with a Code tool: the tool runs the template code, its answer goes back to the model', async () => {
    fake.queue(
      toolCalls([{ id: 'call_1', name: 'my_color_selector', arguments: '{"query":"green, blue"}' }]),
      completion('How about red?'),
    );
    const def = loadFixture('templates/agent-v1.8-code-tool.json');
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'How about red?' }]);
    expect(fake.requests[0]?.model).toBe('gpt-4o-mini');
    expect(messagesOf(0)).toEqual([
      { role: 'system', content: 'You are a helpful assistant' },
      { role: 'user', content: 'Return a random color but not green or blue' },
    ]);
    const tools = fake.requests[0]?.tools as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual(['my_color_selector']);
    const result = messagesOf(1).find((m) => m.role === 'tool');
    expect(['red', 'yellow', 'pink', 'white', 'black', 'orange', 'brown']).toContain(result?.content);
  });

  it('agent v1.7 with a defined prompt, memory and the model from an expression remembers the session', async () => {
    const def = loadFixture('templates/agent-v1.7-openrouter-memory.json');
    fake.queue(completion('Hello Ada.'));
    const first = await runFixture(def, deps, [{ json: { sessionId: 's-1', chatInput: 'I am Ada' } }]);
    expect(first.outcome.status).toBe('success');
    expect(first.outputs['AI Agent']).toEqual([{ output: 'Hello Ada.' }]);
    expect(fake.requests[0]?.model).toBe('deepseek/deepseek-r1-distill-llama-8b');

    fake.queue(completion('You are Ada.'));
    const second = await runFixture(def, deps, [{ json: { sessionId: 's-1', chatInput: 'Who am I?' } }]);
    expect(second.outputs['AI Agent']).toEqual([{ output: 'You are Ada.' }]);
    expect(messagesOf(1).map((m) => [m.role, m.content])).toEqual([
      ['system', 'You are a helpful assistant'],
      ['user', 'I am Ada'],
      ['assistant', 'Hello Ada.'],
      ['user', 'Who am I?'],
    ]);
  });
});

/** An n8n export of AI Agent v1.x with an OpenAI chat model, as n8n's editor saves one. */
function agentV1(version: number, parameters: Record<string, unknown>): WorkflowDefinition {
  return {
    id: 'wf_agent_v1',
    name: 'agent v1',
    nodes: [
      {
        id: 'a',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'b',
        name: 'AI Agent',
        type: '@n8n/n8n-nodes-langchain.agent',
        typeVersion: version,
        position: [200, 0],
        parameters,
      },
      {
        id: 'c',
        name: 'Model',
        type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
        typeVersion: 1,
        position: [200, 200],
        parameters: { model: 'gpt-4o-mini', options: {} },
        credentials: { openAiApi: { id: 'cred1', name: 'OpenAI' } },
      },
    ],
    connections: {
      Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
      Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
    },
  } as unknown as WorkflowDefinition;
}

describe('AI Agent v1.x in n8n export shape', () => {
  it.each([
    [1, { input: 'from input' }, 'from input'],
    [1.1, { chat_input: 'from chat_input' }, 'from chat_input'],
    [1.2, { chatInput: 'from chatInput' }, 'from chatInput'],
  ])('v%s without text reads its version’s input field', async (version, json, prompt) => {
    fake.queue(completion('ok'));
    const { outcome } = await runFixture(agentV1(version, { options: {} }), deps, [{ json }]);
    expect(outcome.status).toBe('success');
    expect(messagesOf(0).at(-1)).toEqual({ role: 'user', content: prompt });
  });

  it('up to v1.5 the default agent is the conversational one, with n8n’s system message', async () => {
    fake.queue(completion('ok'));
    await runFixture(agentV1(1.5, { options: {} }), deps, [{ json: { chatInput: 'hi' } }]);
    expect(messagesOf(0)[0]?.content).toMatch(/^Assistant is a large language model trained by OpenAI\./);
  });

  it('from v1.6 the default agent is the tools agent; a ReAct agent’s prefix is its system message', async () => {
    fake.queue(completion('ok'), completion('ok'));
    await runFixture(agentV1(1.6, { options: {} }), deps, [{ json: { chatInput: 'hi' } }]);
    expect(messagesOf(0)[0]).toEqual({ role: 'system', content: 'You are a helpful assistant' });
    await runFixture(agentV1(1.6, { agent: 'reActAgent', options: { prefix: 'Think first.' } }), deps, [
      { json: { chatInput: 'hi' } },
    ]);
    expect(messagesOf(1)[0]).toEqual({ role: 'system', content: 'Think first.' });
  });

  it('a model that calls tools forever stops at max iterations with n8n’s error', async () => {
    const def = agentV1(1.7, { promptType: 'define', text: 'loop', options: { maxIterations: 2 } });
    def.nodes.push({
      id: 'd',
      name: 'Calculator',
      type: '@n8n/n8n-nodes-langchain.toolCalculator',
      typeVersion: 1,
      position: [400, 200],
      parameters: {},
    } as never);
    (def.connections as Record<string, unknown>).Calculator = {
      ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]],
    };
    for (let i = 0; i < 5; i++)
      fake.queue(toolCalls([{ id: `c${i}`, name: 'calculator', arguments: '{"input":"1+1"}' }]));
    const { outcome } = await runFixture(def, deps);
    expect(outcome.status).toBe('error');
    expect(JSON.stringify(outcome.state.error)).toContain('max iterations (2)');
  });

  it('the SQL and Plan-and-Execute agents are refused at save, by name', () => {
    const limits = { maxWaitMs: 1000, now: new Date() };
    for (const agent of ['sqlAgent', 'planAndExecuteAgent']) {
      const problems = validateWorkflow(agentV1(1.5, { agent, options: {} }), defaultNodeRegistry, limits);
      expect(problems.map((p) => p.path)).toContain('nodes[1].parameters.agent');
      expect(problems.map((p) => p.message).join()).toMatch(/not served here/);
    }
  });
});
