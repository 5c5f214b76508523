import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LlmTestbed, post, startLlmTestbed } from './support.js';

/** SSE `data:` payloads of a body, in order. */
const frames = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice('data: '.length));

/**
 * Issue 32, item 5 (docs/decisions.md, "Same-dialect relay"): an OpenAI client's chat on an
 * OpenAI-compatible model goes upstream as the bytes the gateway validated and comes back as the
 * upstream's bytes or frames, with the same records, refusals and errors as a translated call.
 */
describe('same-dialect relay: OpenAI client → OpenAI-compatible model', () => {
  let bed: LlmTestbed;
  const lastSent = () => bed.openai.requests.at(-1);

  beforeAll(async () => {
    bed = await startLlmTestbed(
      'sqlite',
      {},
      {
        extraModels: (_ollama, openai) => [
          {
            provider: 'openai',
            baseUrl: openai.url,
            timeoutMs: 2_000,
            name: 'house-model',
            upstreamModel: 'gpt-4o-mini',
          },
        ],
      },
    );
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  it('a whole answer: the body goes up as sent, the upstream answer comes back byte for byte', async () => {
    const body =
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"relay me"}],"temperature":0.5}';
    const res = await post(bed, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-model')).toBe('gpt-4o-mini');
    expect(lastSent()?.raw).toBe(body);
    const answer = res.json() as Record<string, unknown>;
    // The fake's own id and fingerprint: nothing was rebuilt.
    expect(answer.id).toBe('chatcmpl-fake1');
    expect(answer.system_fingerprint).toBeTypeOf('string');
    expect(answer).toMatchObject({
      model: 'gpt-4o-mini',
      choices: [{ message: { content: 'Echo: relay me' } }],
    });
  });

  it('a field the gateway does not know is not relayed: the translating path ignores it, as before', async () => {
    const body =
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"relay me"}],"x_vendor_flag":{"a":1}}';
    const res = await post(bed, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(lastSent()?.body).not.toHaveProperty('x_vendor_flag');
    expect((res.json() as { id: string }).id).not.toBe('chatcmpl-fake1');
  });

  it('a body naming "model" twice goes up re-serialized with the model the gateway checked', async () => {
    const body = '{"model":"dead","model":"gpt-4o-mini","messages":[{"role":"user","content":"twice"}]}';
    const res = await post(bed, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(lastSent()?.raw.match(/"model"/g)).toHaveLength(1);
    expect(lastSent()?.body).toMatchObject({ model: 'gpt-4o-mini' });
  });

  it('a mapped name: only the model is rewritten for the upstream; x-llm-model names the registry entry', async () => {
    const res = await post(bed, '/v1/chat/completions', {
      model: 'house-model',
      messages: [{ role: 'user', content: 'mapped' }],
      metadata: { team: 'red' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-model')).toBe('house-model');
    expect(lastSent()?.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'mapped' }],
      metadata: { team: 'red' },
    });
  });

  it('a stream without include_usage: the upstream is asked for the usage, the client does not get that frame', async () => {
    const res = await post(bed, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream two words' }],
      stream: true,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((lastSent()?.body as Record<string, unknown> | undefined)?.stream_options).toEqual({
      include_usage: true,
    });
    const data = frames(res.text);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(chunks.every((c) => Array.isArray(c.choices) && (c.choices as unknown[]).length > 0)).toBe(true);
    expect(chunks.every((c) => !c.usage)).toBe(true);
    const text = chunks
      .map((c) => (c.choices as Array<{ delta: { content?: string } }>)[0]?.delta.content ?? '')
      .join('');
    expect(text).toBe('Echo: stream two words');
  });

  it('a client that leaves before the upstream answers aborts the upstream request; the call is recorded canceled', async () => {
    bed.openai.delayHeadersMs = 10_000;
    try {
      const controller = new AbortController();
      const call = fetch(`${bed.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'wait' }] }),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await expect.poll(() => bed.openai.requests.length, { timeout: 3_000 }).toBe(1);
      controller.abort();
      await call;
      // Well before the model's 2 s header timeout, which would end the request too.
      await bed.openai.untilAborted(1, 1_000);
      expect(bed.openai.aborted).toBe(1);
      await expect
        .poll(
          async () => {
            const list = await bed.p.request({
              method: 'GET',
              url: '/v1/llm/requests?model=gpt-4o-mini&limit=1',
            });
            return (list.json() as { data: Array<{ status: string }> }).data[0]?.status;
          },
          { timeout: 3_000 },
        )
        .toBe('canceled');
    } finally {
      bed.openai.delayHeadersMs = 0;
    }
  });

  it('a stream with include_usage keeps the usage frame; the call is recorded with the upstream counts', async () => {
    const client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'count these tokens please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Echo: count these tokens please');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    const list = await bed.p.request({ method: 'GET', url: '/v1/llm/requests?model=gpt-4o-mini&limit=1' });
    const [row] = (list.json() as { data: Array<Record<string, unknown>> }).data;
    expect(row).toMatchObject({
      endpoint: 'chat.completions',
      answeredBy: 'gpt-4o-mini',
      stream: true,
      status: 'success',
      completionTokens: usage?.completion_tokens,
      promptTokens: usage?.prompt_tokens,
      tokensEstimated: false,
    });
  });

  it('an upstream error frame mid-stream ends the relayed stream with the gateway’s error event, never [DONE]', async () => {
    bed.openai.errorAfterChunks = 2;
    const res = await post(bed, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'this will break' }],
      stream: true,
    });
    expect(res.status).toBe(200);
    const data = frames(res.text);
    expect(data).toHaveLength(3);
    expect(data).not.toContain('[DONE]');
    const last = JSON.parse(data.at(-1) ?? '{}') as { error?: { message?: string; code?: string } };
    expect(last.error?.message).toMatch(/mid-answer/);
    expect(last.error?.code).toBe('upstream_error');
  });

  it('a whole answer that is not JSON is a 502 in OpenAI’s error body', async () => {
    bed.openai.garbage = true;
    const res = await post(bed, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'garbage please' }],
    });
    expect(res.status).toBe(502);
    expect((res.json() as { error: { type: string } }).error.type).toBe('api_error');
  });
});
