import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmTestbed, post, startLlmTestbed } from './support.js';

/**
 * Issue 32, Ollama side and the rest of the OpenAI API: every option the official clients send
 * reaches the provider (the fake upstream records it) or is refused with a 400 naming it.
 */
describe('gateway fidelity: generate, logprobs, dimensions, completions, moderations', () => {
  let bed: LlmTestbed;
  let ollama: Ollama;
  let openai: OpenAI;
  const lastOllama = () => bed.ollama.requests.at(-1) as { path: string; body: Record<string, unknown> };
  const lastOpenAi = () => bed.openai.requests.at(-1) as { path: string; body: Record<string, unknown> };

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    ollama = new Ollama({ host: bed.url, headers: { authorization: `Bearer ${bed.p.adminKey}` } });
    openai = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('generate is a real /api/generate upstream: suffix, raw, template, context, system, logprobs arrive', async () => {
    const answer = await ollama.generate({
      model: 'llama3.2',
      prompt: 'def add(a, b):',
      suffix: '\n    return c',
      system: 'you write python',
      raw: true,
      template: '{{ .Prompt }}',
      context: [5, 6, 7],
      logprobs: true,
      top_logprobs: 2,
      stream: false,
    });
    const sent = lastOllama();
    expect(sent.path).toBe('/api/generate');
    expect(sent.body).toMatchObject({
      prompt: 'def add(a, b):',
      suffix: '\n    return c',
      system: 'you write python',
      raw: true,
      template: '{{ .Prompt }}',
      context: [5, 6, 7],
      logprobs: true,
      top_logprobs: 2,
    });
    // Fill-in-the-middle: the fake answers with what it got on both sides.
    expect(answer.response).toContain('<FILL>');
    expect(answer.context).toEqual([1, 2, 3]);
    expect(answer.logprobs?.[0]).toMatchObject({ logprob: -0.25 });
    expect(answer.logprobs?.[0]?.top_logprobs?.[0]?.logprob).toBe(-0.25);
  });

  it('a streamed generate carries logprobs per chunk and the context at the end', async () => {
    const stream = await ollama.generate({
      model: 'llama3.2',
      prompt: 'hi there',
      logprobs: true,
      stream: true,
    });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.some((p) => (p.logprobs?.length ?? 0) > 0)).toBe(true);
    expect(parts.at(-1)?.context).toEqual([1, 2, 3]);
  });

  it('chat forwards logprobs and top_logprobs to an Ollama upstream', async () => {
    await ollama.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'hello' }],
      logprobs: true,
      top_logprobs: 3,
    });
    expect(lastOllama().body).toMatchObject({ logprobs: true, top_logprobs: 3 });
  });

  it('generate with a suffix on an OpenAI upstream becomes /v1/completions with the suffix', async () => {
    const answer = await ollama.generate({ model: 'gpt-4o-mini', prompt: 'start', suffix: 'end' });
    expect(lastOpenAi().path).toBe('/v1/completions');
    expect(lastOpenAi().body).toMatchObject({ prompt: 'start', suffix: 'end' });
    expect(answer.response).toBe('Echo 0: start|end');
  });

  it('what a provider cannot do is a 400 naming the field, and nothing reaches an upstream', async () => {
    const before = bed.ollama.requests.length + bed.openai.requests.length;
    const refused = async (body: Record<string, unknown>, pattern: RegExp) => {
      const res = await post(bed, '/api/generate', { stream: false, prompt: 'x', ...body });
      expect(res.status).toBe(400);
      expect((res.json() as { error: string }).error).toMatch(pattern);
    };
    await refused({ model: 'gpt-4o-mini', template: '{{ .Prompt }}' }, /body\.template/);
    await refused({ model: 'gpt-4o-mini', context: [1, 2] }, /body\.context/);
    await refused({ model: 'builtin/extractive', suffix: 'x' }, /body\.suffix/);
    await refused({ model: 'builtin/extractive', logprobs: true }, /body\.logprobs/);
    await refused({ model: 'llama3.2', logprobs: 'yes' }, /logprobs/);
    await refused({ model: 'llama3.2', top_logprobs: 1000, logprobs: true }, /top_logprobs/);
    expect(bed.ollama.requests.length + bed.openai.requests.length).toBe(before);
  });

  it('/api/embed forwards dimensions; built-in embedders truncate and renormalise', async () => {
    const upstream = await ollama.embed({ model: 'nomic-embed-text', input: 'hello', dimensions: 4 });
    expect(lastOllama().body.dimensions).toBe(4);
    expect(upstream.embeddings[0]).toHaveLength(4);
    const full = await ollama.embed({ model: 'builtin/hashed-ngrams', input: 'a lot of words here' });
    const short = await ollama.embed({
      model: 'builtin/hashed-ngrams',
      input: 'a lot of words here',
      dimensions: 64,
    });
    const vector = short.embeddings[0] as number[];
    expect(vector).toHaveLength(64);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    // The first components, scaled: same direction as the full vector's prefix.
    const prefix = (full.embeddings[0] as number[]).slice(0, 64);
    const scale = Math.hypot(...prefix);
    expect(vector[0]).toBeCloseTo((prefix[0] as number) / scale, 5);
    const tooMany = await post(bed, '/api/embed', {
      model: 'builtin/hashed-ngrams',
      input: 'x',
      dimensions: 4096,
    });
    expect(tooMany.status).toBe(400);
    expect((tooMany.json() as { error: string }).error).toMatch(/body\.dimensions/);
  });

  it('OpenAI embeddings take token arrays to an OpenAI upstream; an Ollama one refuses them by name', async () => {
    const answer = await openai.embeddings.create({
      model: 'text-embedding-3-small',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
    });
    expect(lastOpenAi().body.input).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(answer.data).toHaveLength(2);
    const error = await openai.embeddings
      .create({ model: 'nomic-embed-text', input: [1, 2, 3] })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/body\.input/);
  });

  it('/v1/completions: suffix, n, logprobs, user arrive; answers come back per choice', async () => {
    const answer = await openai.completions.create({
      model: 'gpt-4o-mini',
      prompt: 'fill',
      suffix: 'here',
      n: 2,
      logprobs: 1,
      user: 'u-1',
      max_tokens: 20,
    });
    expect(lastOpenAi().body).toMatchObject({
      prompt: 'fill',
      suffix: 'here',
      n: 2,
      logprobs: 1,
      user: 'u-1',
      max_tokens: 20,
    });
    expect(answer.choices.map((c) => c.text)).toEqual(['Echo 0: fill|here', 'Echo 1: fill|here']);
    expect(answer.choices[0]?.logprobs?.token_logprobs).toEqual([-0.5]);
    const stream = await openai.completions.create({ model: 'gpt-4o-mini', prompt: 'p', n: 2, stream: true });
    const texts = ['', ''];
    for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.text;
    expect(texts).toEqual(['Echo 0: p|', 'Echo 1: p|']);
  });

  it('/v1/completions on an Ollama model is an /api/generate with the suffix', async () => {
    const answer = await openai.completions.create({ model: 'llama3.2', prompt: 'a', suffix: 'b' });
    expect(lastOllama().path).toBe('/api/generate');
    expect(lastOllama().body).toMatchObject({ prompt: 'a', suffix: 'b' });
    expect(answer.choices[0]?.text).toContain('<FILL>');
  });

  it('n > 1 on chat reaches an OpenAI upstream; an Ollama model refuses it; n = 1000 is a bounded 400', async () => {
    await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      n: 3,
    });
    expect(lastOpenAi().body.n).toBe(3);
    const ollamaN = await openai.chat.completions
      .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'x' }], n: 2 })
      .catch((e) => e);
    expect(ollamaN.status).toBe(400);
    expect(ollamaN.message).toMatch(/body\.n/);
    const huge = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], n: 1000 })
      .catch((e) => e);
    expect(huge.status).toBe(400);
    expect(huge.message).toMatch(/body\.n/);
  });

  it('chat logprobs reach an OpenAI upstream instead of being refused', async () => {
    await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      logprobs: true,
      top_logprobs: 2,
    });
    expect(lastOpenAi().body).toMatchObject({ logprobs: true, top_logprobs: 2 });
  });

  it('/v1/moderations goes through the provider that has it; a chat model is refused', async () => {
    const result = await openai.moderations.create({
      model: 'omni-moderation-latest',
      input: ['kill it', 'hello'],
    });
    expect(lastOpenAi().path).toBe('/v1/moderations');
    expect(result.results.map((r) => r.flagged)).toEqual([true, false]);
    const wrong = await openai.moderations.create({ model: 'gpt-4o-mini', input: 'x' }).catch((e) => e);
    expect(wrong.status).toBe(400);
  });

  it('built-in models honour a JSON schema, or say they cannot', async () => {
    const ok = await ollama.chat({
      model: 'builtin/extractive',
      messages: [{ role: 'user', content: 'The sky is blue. What colour is the sky?' }],
      format: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    });
    expect(typeof JSON.parse(ok.message.content).answer).toBe('string');
    const no = await post(bed, '/api/chat', {
      model: 'builtin/extractive',
      stream: false,
      messages: [{ role: 'user', content: 'What colour is the sky?' }],
      format: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    });
    expect(no.status).toBe(400);
    expect((no.json() as { error: string }).error).toMatch(/cannot follow this schema/);
  });
});
