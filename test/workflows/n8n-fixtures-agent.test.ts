import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { badRequest, completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { expectedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's own AI Agent v3 test workflows (test/fixtures/n8n/agent/, sources in SOURCES-ai.md), run
 * unmodified against a local OpenAI upstream that answers what n8n's test mocks answer
 * (agent-v3.workflow.test.ts, agent-v3-tool-loop.workflow.test.ts), in the same order: a request the mocks
 * do not expect gets a 501 and fails the run.
 */

const fake = new FakeOpenAi();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await fake.start();
  const http = createOutboundHttp({ allowHosts: [new URL(fake.base).host], timeoutMs: 10_000 });
  const cred = { apiKey: 'test-api-key', url: `${fake.base}/v1` };
  deps = {
    http,
    tenant: 'acct_fixture',
    credential: async (id) => {
      if (id === '123' || id === '456') return cred;
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

async function run(file: string, items = [{ json: {} }]) {
  const def = loadFixture(`agent/${file}`);
  const { outcome, outputs } = await runFixture(def, deps, items);
  return { def, outcome, outputs };
}

describe('n8n AI Agent v3 fixtures (OpenAI chat model over a local upstream)', () => {
  it.each([
    ['agent-v3-basic.json', 'Hi there!'],
    ['agent-v3-system-message.json', 'Ahoy there, matey!'],
  ])('%s answers as pinned', async (file, answer) => {
    fake.queue(completion(answer));
    const { def, outcome, outputs } = await run(file);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual(expectedOutputs(def)['AI Agent']);
    expect(fake.pending()).toBe(0);
    expect(fake.requests[0]?.__auth).toBe('Bearer test-api-key');
    expect(fake.requests[0]?.model).toBe('gpt-4o-mini');
  });

  it('system message: sent first, then the prompt', async () => {
    fake.queue(completion('Ahoy there, matey!'));
    await run('agent-v3-system-message.json');
    expect(fake.requests[0]?.messages).toEqual([
      { role: 'system', content: 'You are a pirate. Always respond in pirate speak.' },
      { role: 'user', content: 'Hello!' },
    ]);
  });

  it('auto prompt: reads chatInput of the trigger item', async () => {
    fake.queue(completion('Hi from auto!'));
    const { def, outcome, outputs } = await run('agent-v3-auto-prompt.json', [
      { json: { chatInput: 'Hello!' } },
    ]);
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual(expectedOutputs(def)['AI Agent']);
    const messages = (fake.requests[0]?.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Hello!' });
  });

  it('with tool: the calculator runs, its result goes back, the answer is pinned', async () => {
    fake.queue(
      toolCalls([{ id: 'call_1', name: 'Calculator', arguments: '{"input":"5*5"}' }]),
      completion('5 times 5 equals 25.'),
    );
    const { def, outcome, outputs } = await run('agent-v3-with-tool.json');
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual(expectedOutputs(def)['AI Agent']);
    const offered = fake.requests[0]?.tools as Array<{ function: { name: string } }>;
    expect(offered.map((t) => t.function.name)).toEqual(['calculator']);
    const second = (fake.requests[1]?.messages ?? []) as Array<Record<string, unknown>>;
    expect(second.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '25' });
  });

  it('tool loop (GHC-5636): the tool result reaches the model, two calls in all', async () => {
    fake.queue(
      toolCalls([{ id: 'call_1', name: 'calculator', arguments: '{"input":"5 * 3"}' }]),
      completion('The answer is 15.'),
    );
    const { outcome, outputs } = await run('agent-v3-tool-infinite-loop.json');
    expect(outcome.status).toBe('success');
    expect(String(outputs['AI Agent']?.[0]?.output)).toContain('15');
    expect(fake.requests).toHaveLength(2);
  });

  it('intermediate steps: the tool call and its observation', async () => {
    fake.queue(
      toolCalls([{ id: 'call_1', name: 'Calculator', arguments: '{"input":"5*5"}' }]),
      completion('5 times 5 equals 25.'),
    );
    const { outcome, outputs } = await run('agent-v3-intermediate-steps.json');
    expect(outcome.status).toBe('success');
    const out = outputs['AI Agent']?.[0] as Record<string, unknown>;
    expect(out.output).toBe('5 times 5 equals 25.');
    expect(out.intermediateSteps).toEqual([
      expect.objectContaining({
        action: expect.objectContaining({
          tool: 'Calculator',
          toolCallId: 'call_1',
          toolInput: { input: '5*5' },
        }),
        observation: '25',
      }),
    ]);
  });

  it('fallback model: the primary fails (400), the fallback answers', async () => {
    fake.queue(badRequest, completion('Hello from fallback!'));
    const { def, outcome, outputs } = await run('agent-v3-fallback-model.json');
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual(expectedOutputs(def)['AI Agent']);
    expect(fake.requests.map((r) => r.model)).toEqual(['gpt-4o', 'gpt-4o-mini']);
  });

  it('output parser: the answer comes through format_final_json_response, parsed', async () => {
    fake.queue(
      toolCalls([
        {
          id: 'call_1',
          name: 'format_final_json_response',
          arguments: JSON.stringify({
            output: { state: 'California', cities: ['Los Angeles', 'San Francisco'] },
          }),
        },
      ]),
    );
    const { outcome, outputs } = await run('agent-v3-output-parser.json');
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([
      { output: { state: 'California', cities: ['Los Angeles', 'San Francisco'] } },
    ]);
    expect(fake.requests).toHaveLength(1);
  });

  it('continue on fail: the model error becomes the item', async () => {
    fake.queue(badRequest);
    const { outcome, outputs } = await run('agent-v3-continue-on-fail.json');
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ error: expect.stringContaining('Bad request') }]);
  });

  it('memory: the second run of a session sends the first exchange', async () => {
    fake.queue(completion('I remember everything!'));
    const first = await run('agent-v3-memory.json');
    expect(first.outputs['AI Agent']).toEqual([{ output: 'I remember everything!' }]);
    fake.queue(completion('Still here.'));
    await run('agent-v3-memory.json');
    expect(fake.requests[1]?.messages).toEqual([
      { role: 'system', content: 'You are a helpful assistant' },
      { role: 'user', content: 'Hello!' },
      { role: 'assistant', content: 'I remember everything!' },
      { role: 'user', content: 'Hello!' },
    ]);
  });
});

describe('n8n AI Agent: bad input', () => {
  it('a model that calls tools forever stops at max iterations (10) with a clear error', async () => {
    for (let i = 0; i < 12; i++)
      fake.queue(toolCalls([{ id: `c${i}`, name: 'calculator', arguments: '{"input":"1+1"}' }]));
    const { outcome } = await run('agent-v3-with-tool.json');
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toBe('Agent stopped due to max iterations (10)');
    expect(fake.requests).toHaveLength(10);
  });

  it('malformed tool arguments: the model is told, and its next answer stands', async () => {
    fake.queue(
      toolCalls([{ id: 'call_1', name: 'calculator', arguments: '{"input": 5*' }]),
      completion('Sorry.'),
    );
    const { outcome, outputs } = await run('agent-v3-with-tool.json');
    expect(outcome.status).toBe('success');
    expect(outputs['AI Agent']).toEqual([{ output: 'Sorry.' }]);
    const tool = ((fake.requests[1]?.messages ?? []) as Array<Record<string, unknown>>).at(-1);
    expect(String(tool?.content)).toContain('the arguments are not a JSON object');
  });

  it('hostile calculator input is refused by the parser, never evaluated as code', async () => {
    fake.queue(
      toolCalls([
        { id: 'call_1', name: 'calculator', arguments: JSON.stringify({ input: 'process.exit(1)' }) },
      ]),
      toolCalls([
        {
          id: 'call_2',
          name: 'calculator',
          arguments: JSON.stringify({ input: `${'('.repeat(500)}1${')'.repeat(500)}` }),
        },
      ]),
      completion('done'),
    );
    const { outcome } = await run('agent-v3-with-tool.json');
    expect(outcome.status).toBe('success');
    const contents = fake.requests
      .slice(1)
      .map((r) => ((r.messages ?? []) as Array<{ content: string }>).at(-1)?.content);
    expect(contents).toEqual(["I don't know how to do that.", "I don't know how to do that."]);
  });

  it('an upstream that answers garbage fails the node with a clear message', async () => {
    fake.queue({ status: 200, body: { choices: 'nope' } });
    const { outcome } = await run('agent-v3-basic.json');
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toContain('OpenAI answered without a message');
  });
});
