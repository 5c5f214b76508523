import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { startFakeAnthropic } from '../support/fake-llm/anthropic-server.js';
import { echoReply, type FakeLlmServer } from '../support/fake-llm/index.js';

const UPSTREAM_KEY = 'sk-ant-upstream-test';

/**
 * Anthropic as a provider: a Claude model on a fake Anthropic upstream (its real wire format, a log
 * of what it received) answers the official openai, ollama and @anthropic-ai/sdk clients.
 */
describe('Anthropic provider behind the OpenAI, Ollama and Anthropic surfaces', () => {
  let upstream: FakeLlmServer;
  let p: TestPlatform;
  let url: string;
  let openai: OpenAI;
  let ollama: Ollama;

  beforeAll(async () => {
    upstream = await startFakeAnthropic({ apiKey: UPSTREAM_KEY });
    p = await createTestPlatform({
      dialect: 'sqlite',
      env: {
        ANTHROPIC_TEST_KEY: UPSTREAM_KEY,
        LLM_MODELS: JSON.stringify([
          {
            name: 'claude',
            provider: 'anthropic',
            upstreamModel: 'claude-sonnet-4-5',
            baseUrl: upstream.url,
            apiKeyEnv: 'ANTHROPIC_TEST_KEY',
            version: '2023-06-01',
            timeoutMs: 2_000,
          },
        ]),
      },
    });
    url = await p.app.listen({ port: 0, host: '127.0.0.1' });
    openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: p.adminKey, maxRetries: 0 });
    ollama = new Ollama({ host: url, headers: { Authorization: `Bearer ${p.adminKey}` } });
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    p?.app.server.closeAllConnections();
    await p?.close();
    await upstream?.close();
  });

  const lastBody = () => upstream.requests.at(-1)?.body as Record<string, unknown>;

  it('answers an OpenAI client, with the Messages API body and headers upstream', async () => {
    const res = await openai.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'system', content: 'be terse' },
        { role: 'user', content: 'hello claude' },
      ],
      temperature: 0.3,
      top_p: 0.8,
      stop: ['STOP'],
      user: 'end-user-1',
      max_completion_tokens: 77,
    });
    expect(res.choices[0]?.message.content).toBe(echoReply('hello claude'));
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage?.prompt_tokens).toBe(4);
    expect(res.usage?.completion_tokens).toBe(3);
    const request = upstream.requests.at(-1);
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe(UPSTREAM_KEY);
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers.authorization).toBeUndefined();
    expect(lastBody()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 77,
      system: 'be terse',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello claude' }] }],
      stream: true,
      temperature: 0.3,
      top_p: 0.8,
      stop_sequences: ['STOP'],
      metadata: { user_id: 'end-user-1' },
    });
  });

  it('streams to an OpenAI client, and a cut answer ends as length', async () => {
    const stream = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'stream from claude now' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(echoReply('stream from claude now'));
    expect(usage?.prompt_tokens).toBe(4);
    expect(lastBody().max_tokens).toBe(4096);
    const cut = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'one two three four' }],
      max_tokens: 2,
    });
    expect(cut.choices[0]?.finish_reason).toBe('length');
  });

  it('round-trips tools for an OpenAI client: tool_use streamed in pieces, tool_result sent back', async () => {
    upstream.toolCall = { name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } };
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather now',
          parameters,
        },
      },
    ];
    const res = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    const call = res.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('no function call');
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call.id).toBe('toolu_fake_0');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'c' });
    expect(lastBody()).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather now', input_schema: parameters }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    upstream.toolCall = null;
    const answer = await openai.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: 'sunny' },
      ],
      tools,
    });
    expect(answer.choices[0]?.message.content).toBe(echoReply('sunny'));
    expect(lastBody().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_fake_0', name: 'get_weather', input: { city: 'Paris', unit: 'c' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_fake_0', content: 'sunny' }] },
    ]);
  });

  it('answers an Ollama client, streaming and not, with Ollama options translated', async () => {
    const res = await ollama.chat({
      model: 'claude',
      messages: [{ role: 'user', content: 'hi from ollama' }],
      stream: false,
      options: { temperature: 0.2, top_k: 7, num_predict: 30 },
    });
    expect(res.message.content).toBe(echoReply('hi from ollama'));
    expect(res.done_reason).toBe('stop');
    expect(lastBody()).toMatchObject({ max_tokens: 30, temperature: 0.2, top_k: 7 });
    const stream = await ollama.chat({
      model: 'claude',
      messages: [{ role: 'user', content: 'stream to ollama' }],
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.message.content;
    expect(text).toBe(echoReply('stream to ollama'));
  });

  it('matches an Ollama client’s tool answers (no ids) to the calls by name', async () => {
    upstream.toolCall = [
      { name: 'a', arguments: { x: 1 } },
      { name: 'b', arguments: { y: 2 } },
    ];
    const res = await ollama.chat({
      model: 'claude',
      messages: [{ role: 'user', content: 'call both' }],
      tools: [
        { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: {} } } },
        { type: 'function', function: { name: 'b', parameters: { type: 'object', properties: {} } } },
      ],
      stream: false,
    });
    expect(res.message.tool_calls?.map((c) => c.function.name)).toEqual(['a', 'b']);
    upstream.toolCall = null;
    await ollama.chat({
      model: 'claude',
      stream: false,
      messages: [
        { role: 'user', content: 'call both' },
        { role: 'assistant', content: '', tool_calls: res.message.tool_calls },
        { role: 'tool', tool_name: 'b', content: 'B' },
        { role: 'tool', tool_name: 'a', content: 'A' },
      ],
    });
    const sent = lastBody().messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    const ids = sent[1]?.content.map((b) => b.id);
    expect(sent[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: ids?.[1], content: 'B' },
      { type: 'tool_result', tool_use_id: ids?.[0], content: 'A' },
    ]);
  });

  it('refuses what the Messages API cannot take, naming the field (nothing dropped)', async () => {
    const seeded = await openai.chat.completions
      .create({ model: 'claude', messages: [{ role: 'user', content: 'x' }], seed: 1 })
      .catch((e: unknown) => e);
    expect(seeded).toBeInstanceOf(OpenAI.BadRequestError);
    expect((seeded as Error).message).toContain('body.seed');
    const hot = await openai.chat.completions
      .create({ model: 'claude', messages: [{ role: 'user', content: 'x' }], temperature: 1.5 })
      .catch((e: unknown) => e);
    expect((hot as Error).message).toContain('body.temperature');
    expect(upstream.requests).toHaveLength(0);
  });

  it('passes an Anthropic client through, thinking and tool_choice included', async () => {
    const client = new Anthropic({ baseURL: url, apiKey: p.adminKey, maxRetries: 0 });
    const res = await client.messages.create({
      model: 'claude',
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 't', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: 'think first' }],
    });
    expect(res.content).toEqual([{ type: 'text', text: echoReply('think first') }]);
    expect(lastBody()).toMatchObject({
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tool_choice: { type: 'auto' },
    });
  });

  it('names the upstream’s error and falls to the caller as 502 / 400', async () => {
    upstream.failNext(529);
    const overloaded = await openai.chat.completions
      .create({ model: 'claude', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OpenAI.APIError);
    expect((overloaded as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((overloaded as Error).message).toContain('Anthropic upstream answered 529: Overloaded');
    // message_start, ping, content_block_start, two text deltas: then the error event.
    upstream.errorAfterChunks = 5;
    const stream = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'breaks mid stream' }],
      stream: true,
    });
    await expect(async () => {
      for await (const _ of stream);
    }).rejects.toThrow(/Overloaded/);
  });
});
