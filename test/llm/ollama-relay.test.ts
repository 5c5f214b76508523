import { Ollama } from 'ollama';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LlmTestbed, ndjsonLines, post, startLlmTestbed } from './support.js';

/** The fake Ollama's fixed `created_at`: an answer carrying it came back as the upstream wrote it. */
const FAKE_CREATED_AT = '2025-01-01T00:00:00.000000Z';

/**
 * Issue 32 (docs/decisions.md, "Same-dialect relay"): an Ollama client's /api/chat and /api/generate on
 * an Ollama model go upstream as the bytes the gateway validated and come back as the upstream's lines,
 * only the model renamed, with the same refusals, records and errors as a translated call.
 */
describe('same-dialect relay: Ollama client → Ollama model', () => {
  let bed: LlmTestbed;
  const lastSent = () => bed.ollama.requests.at(-1);
  const lastRecord = async () => {
    const list = await bed.p.request({ method: 'GET', url: '/v1/llm/requests?limit=1' });
    return (list.json() as { data: Array<Record<string, unknown>> }).data[0];
  };

  beforeAll(async () => {
    bed = await startLlmTestbed(
      'sqlite',
      {},
      {
        extraModels: (ollama) => [
          {
            provider: 'ollama',
            baseUrl: ollama.url,
            timeoutMs: 2_000,
            name: 'house-llama',
            upstreamModel: 'llama3.2',
          },
        ],
      },
    );
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.ollama.reset());

  it('a streamed chat: the body goes up as sent, the lines come back as the upstream wrote them', async () => {
    const body =
      '{"model":"llama3.2","messages":[{"role":"user","content":"relay me"}],"options":{"seed":7}}';
    const res = await post(bed, '/api/chat', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get('x-llm-model')).toBe('llama3.2');
    expect(lastSent()?.path).toBe('/api/chat');
    expect(lastSent()?.raw).toBe(body);
    const lines = ndjsonLines(res.text);
    expect(lines.every((l) => l.created_at === FAKE_CREATED_AT && l.model === 'llama3.2')).toBe(true);
    expect(lines.map((l) => (l.message as { content: string }).content).join('')).toBe('Echo: relay me');
    expect(lines.at(-1)).toMatchObject({ done: true, eval_count: expect.any(Number) });
    expect(await lastRecord()).toMatchObject({
      endpoint: 'chat',
      answeredBy: 'llama3.2',
      stream: true,
      status: 'success',
      promptTokens: lines.at(-1)?.prompt_eval_count,
      completionTokens: lines.at(-1)?.eval_count,
      tokensEstimated: false,
    });
  });

  it('a whole chat through the official client: one object, the upstream counts recorded', async () => {
    const ollama = new Ollama({ host: bed.url, headers: { authorization: `Bearer ${bed.p.adminKey}` } });
    const answer = await ollama.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'whole please' }],
      stream: false,
    });
    expect(answer.message.content).toBe('Echo: whole please');
    expect(String(answer.created_at)).toContain('2025-01-01');
    expect(lastSent()?.body).toMatchObject({ stream: false });
    expect(await lastRecord()).toMatchObject({
      stream: false,
      status: 'success',
      completionTokens: answer.eval_count,
      tokensEstimated: false,
    });
  });

  it('a mapped name: the upstream gets its own name, the client sees the registry’s in every line', async () => {
    const res = await post(bed, '/api/chat', {
      model: 'house-llama',
      messages: [{ role: 'user', content: 'mapped' }],
    });
    expect(res.status).toBe(200);
    expect(lastSent()?.body).toEqual({ model: 'llama3.2', messages: [{ role: 'user', content: 'mapped' }] });
    const lines = ndjsonLines(res.text);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => l.model === 'house-llama' && l.created_at === FAKE_CREATED_AT)).toBe(true);
    const whole = await post(bed, '/api/chat', {
      model: 'house-llama',
      messages: [{ role: 'user', content: 'mapped' }],
      stream: false,
    });
    expect(whole.json()).toMatchObject({ model: 'house-llama', done: true });
  });

  it('generate is relayed to /api/generate: suffix, raw and context go up, the context comes back', async () => {
    const body = {
      model: 'llama3.2',
      prompt: 'def add(a, b):',
      suffix: ' return c',
      raw: true,
      context: [5, 6],
    };
    const res = await post(bed, '/api/generate', body);
    expect(res.status).toBe(200);
    expect(lastSent()?.path).toBe('/api/generate');
    expect(lastSent()?.raw).toBe(JSON.stringify(body));
    const lines = ndjsonLines(res.text);
    expect(lines.map((l) => l.response).join('')).toContain('<FILL>');
    expect(lines.at(-1)).toMatchObject({ done: true, context: [1, 2, 3] });
    expect(await lastRecord()).toMatchObject({ endpoint: 'generate', status: 'success' });
  });

  it('a field the gateway does not know is not relayed: the translating path ignores it, as before', async () => {
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'extra', x_vendor: 1 }],
      x_vendor_flag: { a: 1 },
    });
    expect(res.status).toBe(200);
    expect(lastSent()?.body).not.toHaveProperty('x_vendor_flag');
    expect(JSON.stringify(lastSent()?.body)).not.toContain('x_vendor');
    // The translating path writes its own created_at.
    expect(ndjsonLines(res.text)[0]?.created_at).not.toBe(FAKE_CREATED_AT);
  });

  it('a body naming "model" twice goes up re-serialized with the model the gateway checked', async () => {
    const body = '{"model":"dead-alone","model":"llama3.2","messages":[{"role":"user","content":"twice"}]}';
    const res = await post(bed, '/api/chat', body);
    expect(res.status).toBe(200);
    expect(lastSent()?.raw.match(/"model"/g)).toHaveLength(1);
    expect(lastSent()?.body).toMatchObject({ model: 'llama3.2' });
  });

  it('an error line mid-stream ends the relayed stream with the gateway’s error line, recorded as an error', async () => {
    bed.ollama.errorAfterChunks = 1;
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'this will surely break' }],
    });
    expect(res.status).toBe(200);
    const lines = ndjsonLines(res.text);
    expect(lines.at(-1)).toEqual({ error: expect.stringMatching(/mid-answer/) });
    expect(lines.some((l) => l.done === true)).toBe(false);
    expect(await lastRecord()).toMatchObject({ status: 'error', errorCode: 'UPSTREAM_ERROR' });
  });

  it('a stream cut before its done line is a failure, not a finished answer', async () => {
    bed.ollama.closeAfterChunks = 1;
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'cut me off early' }],
    });
    const lines = ndjsonLines(res.text);
    expect(lines.at(-1)).toHaveProperty('error');
    expect(lines.some((l) => l.done === true)).toBe(false);
  });

  it('a whole answer that is not JSON falls to a 502 in Ollama’s error body', async () => {
    bed.ollama.garbage = true;
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'garbage' }],
      stream: false,
    });
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({ error: expect.any(String), code: 'UPSTREAM_ERROR' });
  });

  it('a key may not use a model it was not given, and nothing reaches the upstream', async () => {
    const { key } = await bed.p.createKey({
      name: 'limited',
      type: 'development',
      services: ['llm'],
      role: 'Writer',
      models: ['gpt-4o-mini'],
    });
    const res = await post(
      bed,
      '/api/chat',
      { model: 'llama3.2', messages: [{ role: 'user', content: 'x' }] },
      key,
    );
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({ error: expect.stringMatching(/may not use model/) });
    expect(bed.ollama.requests).toHaveLength(0);
  });

  it('a spent token budget is refused before the upstream is called; relayed calls charge it', async () => {
    const { key } = await bed.p.createKey({
      name: 'budgeted',
      type: 'development',
      services: ['llm'],
      role: 'Writer',
      dailyTokenBudget: 12,
    });
    const chat = { model: 'llama3.2', messages: [{ role: 'user', content: 'one two three' }], stream: false };
    let last = await post(bed, '/api/chat', chat, key);
    expect(last.status).toBe(200);
    for (let i = 0; i < 5 && last.status === 200; i++) last = await post(bed, '/api/chat', chat, key);
    expect(last.status).toBe(429);
    const calls = bed.ollama.requests.length;
    expect((await post(bed, '/api/chat', chat, key)).status).toBe(429);
    expect(bed.ollama.requests).toHaveLength(calls);
  });
});
