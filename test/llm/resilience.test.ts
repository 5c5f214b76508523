import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { echoReply } from '../support/fake-llm/index.js';
import { type LlmTestbed, ndjsonLines, post, startLlmTestbed } from './support.js';

const ask = (model: string, content: string, stream = false) => ({
  model,
  messages: [{ role: 'user' as const, content }],
  stream,
});

/** Fallbacks, timeouts, failures before and after the first byte, and clients that leave. */
describe('gateway resilience', () => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite', {}, { timeoutMs: 400 });
  });
  afterEach(() => {
    bed.ollama.reset();
    bed.openai.reset();
  });
  afterAll(() => bed?.close());

  const lastCalls = async (n: number) => {
    const res = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?limit=${n}` });
    return (res.json() as { data: Array<Record<string, unknown>> }).data;
  };

  it('a 503 before the first byte falls back; the answer names the model that answered', async () => {
    bed.ollama.failNext(503);
    const res = await post(bed, '/api/chat', ask('primary', 'fall back please'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-model')).toBe('gpt-4o-mini');
    expect(res.json()).toMatchObject({
      model: 'gpt-4o-mini',
      message: { content: echoReply('fall back please') },
    });
    const [call] = await lastCalls(1);
    expect(call).toMatchObject({
      model: 'primary',
      answeredBy: 'gpt-4o-mini',
      fallbacksTried: 1,
      status: 'success',
    });
  });

  it('429 and a refused connection fall back too', async () => {
    bed.openai.failNext(429);
    const res = await post(bed, '/v1/chat/completions', ask('openai-primary', 'rate limited'));
    expect(res.status).toBe(200);
    expect((res.json() as { model: string }).model).toBe('llama3.2');
    const dead = await post(bed, '/api/chat', ask('dead', 'nobody home'));
    expect(dead.status).toBe(200);
    expect(dead.headers.get('x-llm-model')).toBe('llama3.2');
  });

  it('a stall before the headers times out and falls back', async () => {
    bed.ollama.delayHeadersMs = 2_000;
    const res = await post(bed, '/api/chat', ask('primary', 'slow upstream'));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-model')).toBe('gpt-4o-mini');
  });

  it('no fallback left: 502 UPSTREAM_ERROR in each surface’s error shape', async () => {
    const ollama = await post(bed, '/api/chat', ask('dead-alone', 'x'));
    expect(ollama.status).toBe(502);
    expect(ollama.json()).toMatchObject({
      error: expect.stringMatching(/No model could answer/),
      code: 'UPSTREAM_ERROR',
    });
    const openai = await post(bed, '/v1/chat/completions', ask('dead-alone', 'x'));
    expect(openai.status).toBe(502);
    expect(openai.json()).toMatchObject({
      error: { type: 'api_error', code: 'upstream_error' },
      code: 'UPSTREAM_ERROR',
    });
    const [call] = await lastCalls(1);
    expect(call).toMatchObject({ model: 'dead-alone', answeredBy: null, status: 'error', httpStatus: 502 });
  });

  it('an upstream 400 is the caller’s problem: passed on as 400, no fallback tried', async () => {
    bed.ollama.failNext(400, 1, 'context length exceeded');
    const res = await post(bed, '/api/chat', ask('primary', 'too long'));
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      error: expect.stringMatching(/context length/),
    });
    expect(bed.openai.requests).toHaveLength(0);
  });

  it('garbage after the first chunk ends the stream with an error line, never done', async () => {
    bed.ollama.garbage = true;
    const res = await post(bed, '/api/chat', ask('llama3.2', 'garbage in the middle', true));
    expect(res.status).toBe(200);
    const lines = ndjsonLines(res.text);
    expect(lines.at(-1)).toEqual({ error: expect.stringMatching(/mid-answer/) });
    expect(lines.some((l) => l.done === true)).toBe(false);
  });

  it('a stream that stalls mid-answer ends with an error line, which the ollama client throws', async () => {
    bed.ollama.stallAfterChunks = 2;
    const client = new Ollama({ host: bed.url, headers: { Authorization: `Bearer ${bed.p.adminKey}` } });
    const stream = await client.chat({ ...ask('llama3.2', 'one two three four five'), stream: true });
    const parts: string[] = [];
    await expect(
      (async () => {
        for await (const part of stream) parts.push(part.message.content);
      })(),
    ).rejects.toThrow(/mid-answer/);
    expect(parts.length).toBe(2);
    const [call] = await lastCalls(1);
    expect(call).toMatchObject({ status: 'error', errorCode: 'UPSTREAM_ERROR' });
  });

  it('a socket cut mid-stream ends an OpenAI stream with an error event the openai client raises', async () => {
    bed.openai.closeAfterChunks = 4;
    bed.openai.chunkDelayMs = 20;
    const client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'cut me off' }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream) {
          // reading until the error
        }
      })(),
    ).rejects.toThrow(/mid-answer/);
  });

  it('a client that leaves aborts the upstream request', async () => {
    bed.ollama.chunkDelayMs = 150;
    const controller = new AbortController();
    const res = await fetch(`${bed.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('llama3.2', 'a b c d e f g h i j k l m n o p', true)),
      signal: controller.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    controller.abort();
    await bed.ollama.untilAborted(1);
    expect(bed.ollama.aborted).toBe(1);
    await expect.poll(async () => (await lastCalls(1))[0]?.status, { timeout: 3_000 }).toBe('canceled');
  });
});
