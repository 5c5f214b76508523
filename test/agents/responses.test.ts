/**
 * Issue 35: OpenAI's Responses API over the agent runtime, and agent frameworks run unmodified against
 * the platform: the OpenAI Agents SDK (Responses API, plain and streamed) and the Vercel AI SDK's agent
 * loop (chat completions and responses), each with a two-tool agent whose tools run in the client,
 * the upstream a fake model that calls them. Then `previous_response_id` and bad input on the wire.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, type Model, OpenAIProvider, run, setTracingDisabled, tool } from '@openai/agents';
import { tool as aiTool, generateText, stepCountIs } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { echoReply } from '../support/fake-llm/index.js';
import { call, chatCalls, textOf, toolCallsThenText } from './support.js';

const MODEL = 'gpt-4o-mini';
const QUESTION = 'What is the weather and the time in Oslo?';

/** The two tools, as each framework declares them; what they were called with. */
function twoTools() {
  const seen: string[] = [];
  return {
    seen,
    weather: async ({ city }: { city: string }) => {
      seen.push(`weather:${city}`);
      return `sunny in ${city}`;
    },
    time: async ({ city }: { city: string }) => {
      seen.push(`time:${city}`);
      return `12:00 in ${city}`;
    },
  };
}

describe.each(await testDialects())('OpenAI Responses API and agent frameworks on %s', (dialect) => {
  let bed: LlmTestbed;
  let sdkModel: Model;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    // The SDK's own provider, on the Responses API, pointed at the platform with a platform key.
    const provider = new OpenAIProvider({
      apiKey: bed.p.adminKey,
      baseURL: `${bed.url}/v1`,
      useResponses: true,
    });
    sdkModel = await provider.getModel(MODEL);
    // Traces would go to OpenAI's servers: none leave the suite.
    setTracingDisabled(true);
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.openai.reset();
    toolCallsThenText(
      bed.openai,
      { name: 'get_weather', arguments: { city: 'Oslo' } },
      { name: 'get_time', arguments: { city: 'Oslo' } },
    );
  });

  /** The fake received both tools' outputs, answering their calls, before it answered. */
  function expectToolResultsSent(): void {
    const last = chatCalls(bed.openai).at(-1);
    const results = (last?.messages ?? []).filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    expect(results.join('|')).toContain('sunny in Oslo');
    expect(results.join('|')).toContain('12:00 in Oslo');
  }

  const agentsSdkAgent = (tools: ReturnType<typeof twoTools>) =>
    new Agent({
      name: 'Assistant',
      instructions: 'Answer with the tools.',
      model: sdkModel,
      tools: [
        tool({
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: z.object({ city: z.string() }),
          execute: tools.weather,
        }),
        tool({
          name: 'get_time',
          description: 'The time in a city',
          parameters: z.object({ city: z.string() }),
          execute: tools.time,
        }),
      ],
    });

  it('the OpenAI Agents SDK runs a two-tool agent, plain and streamed', async () => {
    const tools = twoTools();
    const result = await run(agentsSdkAgent(tools), QUESTION);
    expect(tools.seen).toEqual(['weather:Oslo', 'time:Oslo']);
    expect(result.finalOutput).toBe(echoReply(QUESTION));
    expectToolResultsSent();
    expect(chatCalls(bed.openai)[0]?.system).toContain('Answer with the tools.');

    bed.openai.reset();
    toolCallsThenText(
      bed.openai,
      { name: 'get_weather', arguments: { city: 'Oslo' } },
      { name: 'get_time', arguments: { city: 'Oslo' } },
    );
    const streamedTools = twoTools();
    const streamed = await run(agentsSdkAgent(streamedTools), QUESTION, { stream: true });
    let text = '';
    for await (const event of streamed.toTextStream()) text += event;
    await streamed.completed;
    expect(streamedTools.seen).toEqual(['weather:Oslo', 'time:Oslo']);
    expect(text).toBe(echoReply(QUESTION));
    expect(streamed.finalOutput).toBe(echoReply(QUESTION));
  });

  it("the Vercel AI SDK's agent loop runs a two-tool agent on chat completions and on responses", async () => {
    const provider = createOpenAI({ apiKey: bed.p.adminKey, baseURL: `${bed.url}/v1` });
    for (const model of [provider.chat(MODEL), provider.responses(MODEL)]) {
      bed.openai.reset();
      toolCallsThenText(
        bed.openai,
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'get_time', arguments: { city: 'Oslo' } },
      );
      const tools = twoTools();
      const result = await generateText({
        model,
        prompt: QUESTION,
        maxRetries: 0,
        stopWhen: stepCountIs(5),
        tools: {
          get_weather: aiTool({
            description: 'The weather in a city',
            inputSchema: z.object({ city: z.string() }),
            execute: tools.weather,
          }),
          get_time: aiTool({
            description: 'The time in a city',
            inputSchema: z.object({ city: z.string() }),
            execute: tools.time,
          }),
        },
      });
      expect(tools.seen).toEqual(['weather:Oslo', 'time:Oslo']);
      expect(result.steps).toHaveLength(3);
      expect(result.text).toBe(echoReply(QUESTION));
      expectToolResultsSent();
    }
  });

  it('previous_response_id continues a stored conversation; GET answers the stored response', async () => {
    const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object' } };
    bed.openai.reset();
    toolCallsThenText(bed.openai, { name: 'get_weather', arguments: { city: 'Oslo' } });
    const first = await call(bed, 'POST', '/v1/responses', {
      body: { model: MODEL, input: QUESTION, tools: [weather] },
    });
    expect(first.status, first.text).toBe(200);
    const paused = first.json() as { id: string; status: string; output: Array<Record<string, unknown>> };
    expect(paused.status).toBe('completed');
    expect(paused.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' }),
    ]);
    const callId = paused.output[0]?.call_id as string;
    const second = await call(bed, 'POST', '/v1/responses', {
      body: {
        model: MODEL,
        previous_response_id: paused.id,
        input: [{ type: 'function_call_output', call_id: callId, output: 'sunny' }],
        tools: [weather],
      },
    });
    expect(second.status, second.text).toBe(200);
    const answer = second.json() as { id: string; output: Array<{ type: string; content: unknown }> };
    expect(answer.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        content: [expect.objectContaining({ type: 'output_text', text: echoReply(QUESTION) })],
      }),
    ]);
    // The model saw the question, its own call and the output.
    const roles = chatCalls(bed.openai)
      .at(-1)
      ?.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool']);
    const stored = await call(bed, 'GET', `/v1/responses/${answer.id}`);
    expect(stored.json()).toMatchObject({ id: answer.id, status: 'completed', output: answer.output });
    // Another account's response is not found.
    const foreign = await otherAccountKey(bed.p);
    const hidden = await call(bed, 'GET', `/v1/responses/${answer.id}`, { key: foreign });
    expect(hidden.status).toBe(404);
  });

  it("the official openai client's truncation reaches the response, and a wrong one is a 400", async () => {
    bed.openai.reset();
    const client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    const first = await client.responses.create({ model: MODEL, input: QUESTION, truncation: 'auto' });
    expect(first.truncation).toBe('auto');
    const next = await client.responses.create({
      model: MODEL,
      input: 'and tomorrow?',
      previous_response_id: first.id,
    });
    expect(next.truncation).toBe('disabled');
    expect(
      chatCalls(bed.openai)
        .at(-1)
        ?.messages.map((m) => m.role),
    ).toEqual(['user', 'assistant', 'user']);
    await expect(
      client.responses.create({ model: MODEL, input: QUESTION, truncation: 'sometimes' as 'auto' }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('bad input is a 400 or 404 in OpenAI error shape', async () => {
    const post = (body: Record<string, unknown>) =>
      call(bed, 'POST', '/v1/responses', { body: { model: MODEL, ...body } });
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [
        { input: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }] },
        400,
        'input[0].call_id',
      ],
      [{ input: 'x', tools: [{ type: 'web_search' }] }, 400, 'tools[0].type'],
      [{ input: 'x', previous_response_id: 'resp_nope' }, 404, 'resp_nope'],
      [{ input: 'x', tool_choice: 'required' }, 400, 'toolChoice'],
      [{ input: [{ role: 'robot', content: 'x' }] }, 400, 'input[0].role'],
    ];
    for (const [body, status, named] of cases) {
      const res = await post(body);
      expect(res.status, res.text).toBe(status);
      const error = (res.json() as { error: { message: string; type: string } }).error;
      expect(error.type).toBe('invalid_request_error');
      expect(JSON.stringify(res.json())).toContain(named);
    }
  });
});
