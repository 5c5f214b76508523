import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../../test/helpers/until.js';
import {
  echoChunks,
  FAKE_OLLAMA_TIMINGS,
  type FakeLlmServer,
  fakeEmbedding,
  startFakeOllama,
} from '../../../../test/support/fake-llm/index.js';
import { type ChatEvent, type ChatRequest, type ModelEntry, UpstreamError } from '../types.js';
import { OllamaProvider } from './ollama.js';

let fake: FakeLlmServer;
let provider: OllamaProvider;

beforeAll(async () => {
  fake = await startFakeOllama();
  provider = new OllamaProvider();
});
afterEach(() => fake.reset());
afterAll(async () => {
  provider.close();
  await fake.close();
});

function entry(overrides: Partial<ModelEntry> = {}): ModelEntry {
  return {
    name: 'llama',
    provider: 'ollama',
    upstreamModel: 'llama3.2',
    kind: 'chat',
    contextWindow: 8192,
    fallbacks: [],
    timeoutMs: 2000,
    baseUrl: fake.url,
    ...overrides,
  };
}

function request(content: string, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'llama3.2', messages: [{ role: 'user', content }], options: {}, ...overrides };
}

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The error `promise` rejects with (fails the test when it resolves). */
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

describe('OllamaProvider.chat', () => {
  it('streams the reply as deltas and ends with done, usage and timings', async () => {
    const events = await collect(
      await provider.chat(request('hello there world'), entry(), new AbortController().signal),
    );
    const deltas = events.filter((e) => e.type === 'delta');
    expect(deltas.length).toBe(echoChunks('hello there world').length);
    expect(text(events)).toBe('Echo: hello there world');
    const done = events.at(-1);
    expect(done).toEqual({
      type: 'done',
      doneReason: 'stop',
      usage: { promptTokens: 3, completionTokens: 4, estimated: false },
      timings: {
        totalNs:
          FAKE_OLLAMA_TIMINGS.load_duration +
          FAKE_OLLAMA_TIMINGS.prompt_eval_duration +
          FAKE_OLLAMA_TIMINGS.eval_duration,
        loadNs: FAKE_OLLAMA_TIMINGS.load_duration,
        promptEvalNs: FAKE_OLLAMA_TIMINGS.prompt_eval_duration,
        evalNs: FAKE_OLLAMA_TIMINGS.eval_duration,
      },
    });
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(fake.aborted).toBe(0);
  });

  it('translates the neutral request to the /api/chat body, always streamed', async () => {
    const req: ChatRequest = {
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'look', images: ['iVBORw0KGgo='] },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Oslo' } }],
        },
        { role: 'tool', content: '{"temp":3}', toolName: 'weather', toolCallId: 'call_1' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
      format: 'json',
      keepAlive: '10m',
      think: false,
      options: {
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        maxTokens: 50,
        stop: ['\n\n'],
        seed: 7,
        extra: { num_ctx: 4096, temperature: 1 },
      },
    };
    await collect(await provider.chat(req, entry(), new AbortController().signal));
    const seen = fake.requests[0];
    expect(seen?.path).toBe('/api/chat');
    expect(seen?.body).toEqual({
      model: 'llama3.2',
      stream: true,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'look', images: ['iVBORw0KGgo='] },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ function: { name: 'weather', arguments: { city: 'Oslo' } } }],
        },
        { role: 'tool', content: '{"temp":3}', tool_name: 'weather' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
      format: 'json',
      keep_alive: '10m',
      think: false,
      options: {
        num_ctx: 4096,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        num_predict: 50,
        stop: ['\n\n'],
        seed: 7,
      },
    });
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it('says length when the answer was cut by maxTokens', async () => {
    const events = await collect(
      await provider.chat(
        request('one two three four', { options: { maxTokens: 2 } }),
        entry(),
        new AbortController().signal,
      ),
    );
    expect(text(events)).toBe('Echo: one');
    expect(events.at(-1)).toMatchObject({ type: 'done', doneReason: 'length' });
  });

  it('passes thinking pieces as thinking deltas', async () => {
    const events = await collect(
      await provider.chat(request('why', { think: true }), entry(), new AbortController().signal),
    );
    const thinking = events.map((e) => (e.type === 'delta' ? (e.thinking ?? '') : '')).join('');
    expect(thinking).toBe('Thinking about: why');
    expect(text(events)).toBe('Echo: why');
  });

  it('turns tool calls (object arguments) into neutral tool calls with reason tool_calls', async () => {
    fake.toolCall = [
      { name: 'weather', arguments: { city: 'Oslo', days: 2 } },
      { name: 'time', arguments: {} },
    ];
    const events = await collect(
      await provider.chat(request('weather?'), entry(), new AbortController().signal),
    );
    const calls = events.flatMap((e) => (e.type === 'delta' ? (e.toolCalls ?? []) : []));
    expect(calls).toEqual([
      { name: 'weather', arguments: { city: 'Oslo', days: 2 } },
      { name: 'time', arguments: {} },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', doneReason: 'tool_calls' });
  });

  it('sends the API key as a bearer token when the entry has one', async () => {
    const guarded = await startFakeOllama({ apiKey: 'secret' });
    try {
      const ok = await collect(
        await provider.chat(
          request('hi'),
          entry({ baseUrl: guarded.url, apiKey: 'secret' }),
          new AbortController().signal,
        ),
      );
      expect(text(ok)).toBe('Echo: hi');
      expect(guarded.requests[0]?.headers.authorization).toBe('Bearer secret');
      const error = await failure(
        provider.chat(request('hi'), entry({ baseUrl: guarded.url }), new AbortController().signal),
      );
      expect(error.status).toBe(401);
      expect(error.retryable).toBe(false);
    } finally {
      await guarded.close();
    }
  });

  it('reuses its keep-alive connection across requests, even when the body ends after the final chunk', async () => {
    fake.endDelayMs = 30;
    const before = fake.finished;
    for (let i = 0; i < 3; i++) {
      await collect(await provider.chat(request(`n${i}`), entry(), new AbortController().signal));
      // Past the end of the body: the fake has sent it whole, and one turn of the event loop later
      // (its poll phase reads the end) the drained socket is back in the pool.
      await until(() => fake.finished >= before + i + 1, 'the end of the body', 20_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await provider.embed({ model: 'nomic-embed-text', input: ['x'] }, entry(), new AbortController().signal);
    expect(fake.requests).toHaveLength(4);
    expect(fake.connections).toBeLessThanOrEqual(1);
    expect(fake.aborted).toBe(0);
  });
});

describe('OllamaProvider.chat failures', () => {
  it.each([429, 500, 503])('rejects a %i as a retryable UpstreamError with the status', async (status) => {
    fake.failNext(status);
    const error = await failure(provider.chat(request('hi'), entry(), new AbortController().signal));
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(status);
    expect(error.message).toContain(String(status));
  });

  it('rejects an unknown model (404) as not retryable, with Ollama’s message', async () => {
    const error = await failure(
      provider.chat(
        request('hi', { model: 'nope' }),
        entry({ upstreamModel: 'nope' }),
        new AbortController().signal,
      ),
    );
    expect(error.status).toBe(404);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('model "nope" not found');
  });

  it('rejects a 400 as not retryable', async () => {
    fake.failNext(400, 1, 'invalid options');
    const error = await failure(provider.chat(request('hi'), entry(), new AbortController().signal));
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect(error.message).toContain('invalid options');
  });

  it('rejects a refused connection as retryable, without a status', async () => {
    const gone = await startFakeOllama();
    const url = gone.url;
    await gone.close();
    const error = await failure(
      provider.chat(request('hi'), entry({ baseUrl: url }), new AbortController().signal),
    );
    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
  });

  it('times out when the headers do not come within timeoutMs', async () => {
    fake.delayHeadersMs = 2000;
    const started = Date.now();
    const error = await failure(
      provider.chat(request('hi'), entry({ timeoutMs: 150 }), new AbortController().signal),
    );
    expect(Date.now() - started).toBeLessThan(1500);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('did not answer within 150 ms');
    await fake.untilAborted();
  });

  it('throws from the stream when the upstream goes silent mid-stream', async () => {
    fake.stallAfterChunks = 2;
    const seen: ChatEvent[] = [];
    const events = await provider.chat(
      request('a b c d e'),
      entry({ timeoutMs: 150 }),
      new AbortController().signal,
    );
    const error = await failure(
      (async () => {
        for await (const event of events) seen.push(event);
      })(),
    );
    expect(error.message).toContain('sent nothing for 150 ms');
    expect(text(seen)).toBe('Echo: a');
    await fake.untilAborted();
  });

  it('does not count a slow reader as upstream silence', async () => {
    const events = await provider.chat(
      request('a b c'),
      entry({ timeoutMs: 100 }),
      new AbortController().signal,
    );
    const seen: ChatEvent[] = [];
    for await (const event of events) {
      seen.push(event);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    expect(text(seen)).toBe('Echo: a b c');
  });

  it('throws on a line that is not JSON', async () => {
    fake.garbage = true;
    const events = await provider.chat(request('hi there'), entry(), new AbortController().signal);
    const error = await failure(collect(events));
    expect(error.message).toContain('invalid JSON');
  });

  it('throws when the socket closes before the final chunk', async () => {
    fake.closeAfterChunks = 2;
    const events = await provider.chat(request('a b c d'), entry(), new AbortController().signal);
    const error = await failure(collect(events));
    expect(error.message).toContain('closed the connection');
  });

  it('throws on an in-stream {"error"} line, with its message', async () => {
    fake.errorAfterChunks = 1;
    const events = await provider.chat(request('a b c d'), entry(), new AbortController().signal);
    const error = await failure(collect(events));
    expect(error.message).toContain('fake upstream failure');
  });

  it('destroys the upstream request at once when the signal aborts mid-stream', async () => {
    fake.stallAfterChunks = 1;
    const controller = new AbortController();
    const events = await provider.chat(request('a b c'), entry({ timeoutMs: 10_000 }), controller.signal);
    const iterator = events[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual({ type: 'delta', content: 'Echo:' });
    const started = Date.now();
    const pending = iterator.next();
    controller.abort();
    const error = await failure(pending);
    expect(error.retryable).toBe(false);
    await fake.untilAborted();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('rejects at once when the signal aborts before the headers', async () => {
    fake.delayHeadersMs = 5000;
    const controller = new AbortController();
    const sent = fake.requests.length;
    const pending = provider.chat(request('hi'), entry({ timeoutMs: 10_000 }), controller.signal);
    // Aborted once the request has reached the fake (it holds the headers for 5 s).
    void until(() => fake.requests.length > sent, 'the request at the fake', 20_000).then(() =>
      controller.abort(),
    );
    const error = await failure(pending);
    expect(error.message).toContain('aborted');
    await fake.untilAborted();
  });

  it('destroys the upstream request when the reader stops early', async () => {
    fake.chunkDelayMs = 50;
    const events = await provider.chat(request('a b c d e f'), entry(), new AbortController().signal);
    for await (const event of events) {
      expect(event.type).toBe('delta');
      break;
    }
    await fake.untilAborted();
  });
});

describe('OllamaProvider.embed', () => {
  it('posts /api/embed and returns the vectors and prompt tokens', async () => {
    const result = await provider.embed(
      { model: 'nomic-embed-text', input: ['first text', 'second'] },
      entry({ upstreamModel: 'nomic-embed-text', kind: 'embedding' }),
      new AbortController().signal,
    );
    expect(result.embeddings).toEqual([fakeEmbedding('first text'), fakeEmbedding('second')]);
    expect(result.promptTokens).toBe(3);
    expect(fake.requests[0]).toMatchObject({
      path: '/api/embed',
      body: { model: 'nomic-embed-text', input: ['first text', 'second'], truncate: true },
    });
  });

  it('rejects an unknown model as not retryable and a 503 as retryable', async () => {
    const missing = await failure(
      provider.embed({ model: 'nope', input: ['x'] }, entry(), new AbortController().signal),
    );
    expect(missing).toMatchObject({ status: 404, retryable: false });
    fake.failNext(503);
    const busy = await failure(
      provider.embed({ model: 'nomic-embed-text', input: ['x'] }, entry(), new AbortController().signal),
    );
    expect(busy).toMatchObject({ status: 503, retryable: true });
  });

  it('rejects a body that is not JSON', async () => {
    fake.garbage = true;
    const error = await failure(
      provider.embed({ model: 'nomic-embed-text', input: ['x'] }, entry(), new AbortController().signal),
    );
    expect(error.message).toContain('invalid JSON');
  });

  it('times out when the answer does not come', async () => {
    fake.delayHeadersMs = 2000;
    const error = await failure(
      provider.embed(
        { model: 'nomic-embed-text', input: ['x'] },
        entry({ timeoutMs: 100 }),
        new AbortController().signal,
      ),
    );
    expect(error.retryable).toBe(true);
  });
});
