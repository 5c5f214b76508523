import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../../test/helpers/until.js';
import {
  type FakeLlmServer,
  fakeEmbedding,
  startFakeOpenAi,
} from '../../../../test/support/fake-llm/index.js';
import { type ChatEvent, type ChatRequest, type ModelEntry, UpstreamError } from '../types.js';
import { OpenAiProvider } from './openai.js';

const KEY = 'sk-test-123';
let fake: FakeLlmServer;
let provider: OpenAiProvider;

beforeAll(async () => {
  fake = await startFakeOpenAi({ apiKey: KEY });
  provider = new OpenAiProvider();
});
afterEach(() => fake.reset());
afterAll(async () => {
  provider.close();
  await fake.close();
});

function entry(overrides: Partial<ModelEntry> = {}): ModelEntry {
  return {
    name: 'mini',
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini',
    kind: 'chat',
    contextWindow: 128_000,
    fallbacks: [],
    timeoutMs: 2000,
    baseUrl: fake.url,
    apiKey: KEY,
    ...overrides,
  };
}

function request(content: string, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], options: {}, ...overrides };
}

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error('expected an UpstreamError');
}

const text = (events: ChatEvent[]): string =>
  events.map((e) => (e.type === 'delta' ? (e.content ?? '') : '')).join('');
const signal = (): AbortSignal => new AbortController().signal;

describe('OpenAiProvider.chat', () => {
  it('streams the reply as deltas and ends with done and the usage chunk’s counts', async () => {
    const events = await collect(await provider.chat(request('hello there world'), entry(), signal()));
    expect(events.filter((e) => e.type === 'delta').length).toBe(4);
    expect(text(events)).toBe('Echo: hello there world');
    expect(events.at(-1)).toEqual({
      type: 'done',
      doneReason: 'stop',
      usage: { promptTokens: 3, completionTokens: 4, estimated: false },
    });
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    const seen = fake.requests[0];
    expect(seen?.path).toBe('/v1/chat/completions');
    expect(seen?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(fake.aborted).toBe(0);
  });

  it('translates the neutral request to a chat completions body', async () => {
    const req: ChatRequest = {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'look', images: ['/9j/4AAQ', 'iVBORw0KGgo='] },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { name: 'weather', arguments: { city: 'Oslo' } },
            { name: 'time', arguments: {} },
          ],
        },
        // Came in through the Ollama surface: names, no ids.
        { role: 'tool', content: '12:00', toolName: 'time' },
        { role: 'tool', content: '{"temp":3}', toolName: 'weather' },
        {
          role: 'assistant',
          content: 'ok',
          toolCalls: [{ id: 'call_x', name: 'weather', arguments: { city: 'Rome' } }],
        },
        { role: 'tool', content: '{"temp":20}', toolCallId: 'call_x' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
      format: { type: 'object', properties: { echo: { type: 'string' } } },
      options: {
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        maxTokens: 50,
        stop: ['\n\n'],
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.3,
        extra: { num_ctx: 4096 },
      },
    };
    const events = await collect(await provider.chat(req, entry(), signal()));
    expect(text(events)).toBe('{"echo":"and now?"}');
    expect(fake.requests[0]?.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_2_0', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2_1', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_2_1', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_2_0', content: '{"temp":3}' },
        {
          role: 'assistant',
          content: 'ok',
          tool_calls: [
            { id: 'call_x', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_x', content: '{"temp":20}' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'response',
          schema: { type: 'object', properties: { echo: { type: 'string' } } },
          strict: true,
        },
      },
      temperature: 0.2,
      top_p: 0.9,
      // Not OpenAI's own, but what vLLM, llama.cpp and LM Studio read; sent, never dropped.
      top_k: 40,
      max_tokens: 50,
      stop: ['\n\n'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
    });
  });

  it("maps format 'json' to a json_object response format", async () => {
    await collect(await provider.chat(request('x', { format: 'json' }), entry(), signal()));
    expect(fake.requests[0]?.body).toMatchObject({ response_format: { type: 'json_object' } });
  });

  it('says length when the answer was cut by maxTokens', async () => {
    const events = await collect(
      await provider.chat(request('one two three four', { options: { maxTokens: 2 } }), entry(), signal()),
    );
    expect(text(events)).toBe('Echo: one');
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      doneReason: 'length',
      usage: { completionTokens: 2 },
    });
  });

  it('reassembles tool calls streamed in fragments by index and emits each once, complete', async () => {
    fake.toolCall = [
      { name: 'weather', arguments: { city: 'Oslo', days: 2, units: 'metric' } },
      { name: 'lookup', arguments: { query: 'a longer query string that spans several pieces' } },
    ];
    const events = await collect(await provider.chat(request('weather?'), entry(), signal()));
    const withCalls = events.filter((e) => e.type === 'delta' && e.toolCalls);
    expect(withCalls).toHaveLength(1);
    expect(withCalls[0]).toEqual({
      type: 'delta',
      toolCalls: [
        { id: 'call_fake_0', name: 'weather', arguments: { city: 'Oslo', days: 2, units: 'metric' } },
        {
          id: 'call_fake_1',
          name: 'lookup',
          arguments: { query: 'a longer query string that spans several pieces' },
        },
      ],
    });
    expect(text(events)).toBe('');
    expect(events.at(-1)).toMatchObject({ type: 'done', doneReason: 'tool_calls' });
  });

  it('reuses its keep-alive connection across requests, even when the body ends after the final chunk', async () => {
    fake.endDelayMs = 30;
    const before = fake.finished;
    for (let i = 0; i < 3; i++) {
      await collect(await provider.chat(request(`n${i}`), entry(), signal()));
      // Past the end of the body: the fake has sent it whole, and one turn of the event loop later
      // (its poll phase reads the end) the drained socket is back in the pool.
      await until(() => fake.finished >= before + i + 1, 'the end of the body', 20_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await provider.embed({ model: 'text-embedding-3-small', input: ['x'] }, entry(), signal());
    expect(fake.requests).toHaveLength(4);
    expect(fake.connections).toBeLessThanOrEqual(1);
    expect(fake.aborted).toBe(0);
  });
});

describe('OpenAiProvider.chat failures', () => {
  it('rejects a missing or wrong key (401) as not retryable, with OpenAI’s message', async () => {
    const error = await failure(provider.chat(request('hi'), entry({ apiKey: 'sk-wrong' }), signal()));
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(error.message).toContain('Incorrect API key');
    const none = await failure(provider.chat(request('hi'), entry({ apiKey: undefined }), signal()));
    expect(none.status).toBe(401);
    expect(fake.requests[1]?.headers.authorization).toBeUndefined();
  });

  it.each([429, 500, 503])('rejects a %i as a retryable UpstreamError with the status', async (status) => {
    fake.failNext(status);
    const error = await failure(provider.chat(request('hi'), entry(), signal()));
    expect(error).toMatchObject({ status, retryable: true });
  });

  it('rejects an unknown model (404) as not retryable', async () => {
    const error = await failure(provider.chat(request('hi', { model: 'gpt-nope' }), entry(), signal()));
    expect(error).toMatchObject({ status: 404, retryable: false });
    expect(error.message).toContain('The model `gpt-nope` does not exist');
  });

  it('rejects a 400 as not retryable', async () => {
    fake.failNext(400, 1, "Invalid value for 'temperature'");
    const error = await failure(provider.chat(request('hi'), entry(), signal()));
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect(error.message).toContain("Invalid value for 'temperature'");
  });

  it('times out when the headers do not come within timeoutMs', async () => {
    fake.delayHeadersMs = 2000;
    const error = await failure(provider.chat(request('hi'), entry({ timeoutMs: 120 }), signal()));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('did not answer within 120 ms');
    await fake.untilAborted();
  });

  it('throws from the stream when the upstream goes silent mid-stream', async () => {
    fake.stallAfterChunks = 2;
    const seen: ChatEvent[] = [];
    const events = await provider.chat(request('a b c'), entry({ timeoutMs: 150 }), signal());
    const error = await failure(
      (async () => {
        for await (const event of events) seen.push(event);
      })(),
    );
    expect(error.message).toContain('sent nothing for 150 ms');
    expect(text(seen)).toBe('Echo:');
    await fake.untilAborted();
  });

  it('throws on a broken SSE event', async () => {
    fake.garbage = true;
    const error = await failure(collect(await provider.chat(request('hi'), entry(), signal())));
    expect(error.message).toContain('invalid JSON');
  });

  it('throws when the socket closes before [DONE]', async () => {
    fake.closeAfterChunks = 3;
    const error = await failure(collect(await provider.chat(request('a b c d'), entry(), signal())));
    expect(error.message).toContain('closed the connection');
  });

  it('throws on an in-stream error object, with its message', async () => {
    fake.errorAfterChunks = 2;
    const error = await failure(collect(await provider.chat(request('a b c d'), entry(), signal())));
    expect(error.message).toContain('fake upstream failure');
  });

  it('destroys the upstream request at once when the signal aborts', async () => {
    fake.stallAfterChunks = 2;
    const controller = new AbortController();
    const iterator = (await provider.chat(request('a b'), entry({ timeoutMs: 10_000 }), controller.signal))[
      Symbol.asyncIterator
    ]();
    expect((await iterator.next()).value).toEqual({ type: 'delta', content: 'Echo:' });
    const pending = iterator.next();
    controller.abort();
    const error = await failure(pending);
    expect(error.retryable).toBe(false);
    await fake.untilAborted();
  });
});

describe('OpenAiProvider.embed', () => {
  it('posts /embeddings with float encoding and returns vectors in input order', async () => {
    const result = await provider.embed(
      { model: 'text-embedding-3-small', input: ['first text', 'second'], dimensions: 4 },
      entry({ upstreamModel: 'text-embedding-3-small', kind: 'embedding' }),
      signal(),
    );
    expect(result.embeddings).toEqual([fakeEmbedding('first text', 4), fakeEmbedding('second', 4)]);
    expect(result.promptTokens).toBe(3);
    expect(fake.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      body: {
        model: 'text-embedding-3-small',
        input: ['first text', 'second'],
        encoding_format: 'float',
        dimensions: 4,
      },
    });
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('rejects an unknown model as not retryable and a 429 as retryable', async () => {
    const missing = await failure(provider.embed({ model: 'nope', input: ['x'] }, entry(), signal()));
    expect(missing).toMatchObject({ status: 404, retryable: false });
    fake.failNext(429);
    const limited = await failure(
      provider.embed({ model: 'text-embedding-3-small', input: ['x'] }, entry(), signal()),
    );
    expect(limited).toMatchObject({ status: 429, retryable: true });
  });

  it('rejects a body that is not JSON', async () => {
    fake.garbage = true;
    const error = await failure(
      provider.embed({ model: 'text-embedding-3-small', input: ['x'] }, entry(), signal()),
    );
    expect(error.message).toContain('invalid JSON');
  });
});
