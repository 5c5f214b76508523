/**
 * The fake upstreams checked with the official clients (ollama-js, openai-node): if these parse the
 * fakes' answers, the providers are tested against the real wire formats.
 */
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  echoReply,
  FAKE_OLLAMA_VERSION,
  type FakeLlmServer,
  fakeEmbedding,
  startFakeOllama,
  startFakeOpenAi,
} from '../../../../test/support/fake-llm/index.js';

/** The HTTP status an official client's error carries (`status` for openai, `status_code` for ollama). */
function statusOf(error: unknown): number | undefined {
  if (error && typeof error === 'object') {
    if ('status' in error && typeof error.status === 'number') return error.status;
    if ('status_code' in error && typeof error.status_code === 'number') return error.status_code;
  }
  return undefined;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('fake Ollama, through ollama-js', () => {
  let fake: FakeLlmServer;
  let client: Ollama;
  beforeAll(async () => {
    fake = await startFakeOllama();
    client = new Ollama({ host: fake.url });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('streams /api/chat as NDJSON ending with done and the counts', async () => {
    const parts: string[] = [];
    let last: Awaited<ReturnType<typeof client.chat>> | undefined;
    for await (const part of await client.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'hi you' }],
      stream: true,
    })) {
      parts.push(part.message.content);
      last = part;
    }
    expect(parts.join('')).toBe(echoReply('hi you'));
    expect(last).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 2, eval_count: 3 });
    expect(fake.requests[0]?.headers['content-type']).toContain('application/json');
  });

  it('answers stream:false with one object, tool calls with object arguments', async () => {
    const plain = await client.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'yo' }],
      stream: false,
    });
    expect(plain.message.content).toBe('Echo: yo');
    expect(plain.done).toBe(true);
    fake.toolCall = { name: 'weather', arguments: { city: 'Oslo' } };
    const called = await client.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'w?' }],
      stream: false,
    });
    expect(called.message.tool_calls?.[0]?.function).toMatchObject({
      name: 'weather',
      arguments: { city: 'Oslo' },
    });
  });

  it('serves generate, embed, tags, show and version', async () => {
    const generated = await client.generate({ model: 'llama3.2', prompt: 'say it', stream: false });
    expect(generated.response).toBe('Echo: say it');
    const embedded = await client.embed({ model: 'nomic-embed-text', input: ['a', 'b'] });
    expect(embedded.embeddings).toEqual([fakeEmbedding('a'), fakeEmbedding('b')]);
    const tags = await client.list();
    expect(tags.models.map((m) => m.name)).toEqual(['llama3.2:latest', 'nomic-embed-text:latest']);
    const shown = await client.show({ model: 'llama3.2' });
    expect(shown.details.family).toBe('llama');
    expect(shown.capabilities).toContain('completion');
    expect((await client.version()).version).toBe(FAKE_OLLAMA_VERSION);
  });

  it('answers an unknown model with 404 and failNext with the given status', async () => {
    const missing = await rejection(
      client.chat({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(statusOf(missing)).toBe(404);
    expect(String(missing)).toContain('model "nope" not found');
    fake.failNext(503, 2);
    for (let i = 0; i < 2; i++) {
      expect(statusOf(await rejection(client.embed({ model: 'nomic-embed-text', input: 'x' })))).toBe(503);
    }
    await expect(client.embed({ model: 'nomic-embed-text', input: 'x' })).resolves.toBeTruthy();
  });
});

describe('fake OpenAI, through openai-node', () => {
  const KEY = 'sk-fake';
  let fake: FakeLlmServer;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    client = new OpenAI({ baseURL: fake.url, apiKey: KEY, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('answers a chat.completion with usage', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi you' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('Echo: hi you');
    expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  });

  it('streams chunks, the usage chunk with empty choices and tool calls the SDK reassembles', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi you' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const parts: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      parts.push(chunk.choices[0]?.delta.content ?? '');
      if (chunk.usage) {
        usage = chunk.usage;
        expect(chunk.choices).toEqual([]);
      }
    }
    expect(parts.join('')).toBe('Echo: hi you');
    expect(usage?.completion_tokens).toBe(3);

    fake.toolCall = { name: 'weather', arguments: { city: 'Oslo', note: 'spans several argument pieces' } };
    const runner = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'w?' }],
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? JSON.parse(call.function.arguments) : null).toEqual({
      city: 'Oslo',
      note: 'spans several argument pieces',
    });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('serves embeddings as floats and as base64 float32 (the SDK’s default)', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expect(floats.data.map((d) => d.embedding)).toEqual([fakeEmbedding('a'), fakeEmbedding('b')]);
    const decoded = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'a',
      dimensions: 5,
    });
    expect(decoded.data[0]?.embedding).toEqual(fakeEmbedding('a', 5));
    expect(fake.requests.at(-1)?.body).toMatchObject({ encoding_format: 'base64' });
  });

  it('lists models and answers errors in OpenAI’s shape', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    const missing = await rejection(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    fake.failNext(429);
    expect(
      await rejection(
        client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      ),
    ).toBeInstanceOf(OpenAI.RateLimitError);
    const wrongKey = new OpenAI({ baseURL: fake.url, apiKey: 'sk-wrong', maxRetries: 0 });
    expect(await rejection(wrongKey.models.list())).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
