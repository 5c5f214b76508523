import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, fakeEmbedding } from '../support/fake-llm/index.js';
import { type LlmTestbed, ndjsonLines, post, startLlmTestbed } from './support.js';

/** The official `ollama` npm client, unmodified, pointed at the platform with a platform key. */
describe('Ollama API through the official ollama client', () => {
  let bed: LlmTestbed;
  let client: Ollama;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    client = new Ollama({ host: bed.url, headers: { Authorization: `Bearer ${bed.p.adminKey}` } });
  });
  afterAll(() => bed?.close());

  it('chats without streaming: one answer, the usage counts of the upstream', async () => {
    const res = await client.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(res.message).toMatchObject({ role: 'assistant', content: echoReply('hello there') });
    expect(res).toMatchObject({ model: 'llama3.2', done: true, done_reason: 'stop' });
    expect(res.prompt_eval_count).toBeGreaterThan(0);
    expect(res.eval_count).toBeGreaterThan(0);
    expect(res.total_duration).toBeGreaterThan(0);
    expect(Date.parse(String(res.created_at))).not.toBeNaN();
  });

  it('chats streaming: pieces that add up to the answer, the last one done', async () => {
    const stream = await client.chat({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'stream me some words' }],
      stream: true,
    });
    const parts: string[] = [];
    let last: { done: boolean; eval_count?: number } | null = null;
    for await (const part of stream) {
      parts.push(part.message.content);
      last = part;
    }
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join('')).toBe(echoReply('stream me some words'));
    expect(last?.done).toBe(true);
    expect(last?.eval_count).toBeGreaterThan(0);
  });

  it('answers from an OpenAI-compatible upstream in Ollama’s shape, streaming too', async () => {
    const res = await client.chat({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'cross over' }],
    });
    expect(res.message.content).toBe(echoReply('cross over'));
    expect(res.prompt_eval_count).toBeGreaterThan(0);
    const stream = await client.chat({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'cross stream' }],
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.message.content;
    expect(text).toBe(echoReply('cross stream'));
    const sent = bed.openai.requests.at(-1);
    expect(sent?.headers.authorization).toBe('Bearer sk-upstream-test');
  });

  it('passes tools both ways: an OpenAI tool call arrives as Ollama tool_calls with object arguments', async () => {
    bed.openai.toolCall = { name: 'get_weather', arguments: { city: 'Paris', unit: 'C' } };
    try {
      const res = await client.chat({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather of a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
      });
      expect(res.message.tool_calls).toEqual([
        { function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'C' } } },
      ]);
      const body = bed.openai.requests.at(-1)?.body as { tools: Array<{ function: { name: string } }> };
      expect(body.tools[0]?.function.name).toBe('get_weather');
    } finally {
      bed.openai.toolCall = null;
    }
  });

  it('generates from a prompt, with a system prompt', async () => {
    const res = await client.generate({ model: 'llama3.2', prompt: 'complete this', system: 'be brief' });
    expect(res.response).toBe(echoReply('complete this'));
    expect(res.done).toBe(true);
    // A real generate upstream (issue 32), not a one-turn chat.
    const sent = bed.ollama.requests.at(-1);
    expect(sent?.path).toBe('/api/generate');
    expect(sent?.body).toMatchObject({ system: 'be brief', prompt: 'complete this' });
    const stream = await client.generate({ model: 'llama3.2', prompt: 'and stream', stream: true });
    let text = '';
    for await (const part of stream) text += part.response;
    expect(text).toBe(echoReply('and stream'));
  });

  it('embeds on an upstream and on the built-in models, and by the legacy route', async () => {
    const upstream = await client.embed({ model: 'nomic-embed-text', input: ['one', 'two'] });
    expect(upstream.embeddings).toEqual([fakeEmbedding('one'), fakeEmbedding('two')]);
    const builtin = await client.embed({ model: 'builtin/hashed-ngrams', input: 'a lexical embedding' });
    expect(builtin.embeddings).toHaveLength(1);
    expect(builtin.embeddings[0]).toHaveLength(384);
    const legacy = await client.embeddings({ model: 'builtin/hashed-ngrams', prompt: 'a lexical embedding' });
    expect(legacy.embedding).toEqual(builtin.embeddings[0]);
  });

  it('lists, shows and reports the models', async () => {
    const list = await client.list();
    const names = list.models.map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(['llama3.2', 'gpt-4o-mini', 'builtin/extractive']));
    const show = await client.show({ model: 'builtin/extractive' });
    expect(show.modelfile).toMatch(/does not generate text/);
    expect(show.capabilities).toEqual(['completion']);
    const embedder = await client.show({ model: 'builtin/hashed-ngrams' });
    expect(embedder.capabilities).toEqual(['embedding']);
    const ps = await client.ps();
    expect(ps.models.map((m) => m.name)).toContain('llama3.2');
    const version = await client.version();
    expect(version.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('unknown model: 404 in Ollama’s error shape, which the client throws with its message, naming the usable models', async () => {
    await expect(
      client.chat({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status_code: 404,
      error: expect.stringMatching(
        /^model "nope" not found; this key may use: .*llama3\.2.*\(GET \/v1\/models/,
      ),
    });
    const raw = await post(bed, '/api/chat', { model: 'nope', messages: [] });
    expect(raw.status).toBe(404);
    const body = raw.json() as { error: string; code: string; details: { available: string[] } };
    expect(body).toMatchObject({
      error: expect.stringMatching(/^model "nope" not found/),
      code: 'MODEL_NOT_FOUND',
    });
    // Chat models only: an embedding model would not answer this call either.
    expect(body.details.available).toContain('llama3.2');
    expect(body.details.available).not.toContain('nomic-embed-text');
  });

  it('the built-in extractive model quotes the conversation and says it does not generate', async () => {
    const res = await client.chat({
      model: 'builtin/extractive',
      messages: [
        { role: 'system', content: 'Our store ships to Canada in 5 days. Returns are free for 30 days.' },
        { role: 'user', content: 'How long does shipping to Canada take?' },
      ],
    });
    expect(res.message.content).toContain('Our store ships to Canada in 5 days.');
    expect(res.message.content).toMatch(/Sources: message 0/);
    expect(res.message.content).not.toContain('Returns are free');
  });

  it('reads the JSON of `curl -d` (a form content type), as Ollama does, still strictly', async () => {
    const send = (body: string) =>
      fetch(`${bed.url}/api/chat`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bed.p.adminKey}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body,
      });
    const ok = await send(
      '{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"curl -d"}]}',
    );
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { message: { content: string } }).message.content).toBe(
      echoReply('curl -d'),
    );
    const nested = await send(`{"model":"llama3.2","x":${'['.repeat(200)}${']'.repeat(200)}}`);
    expect(nested.status).toBe(400);
    const formOnOpenAi = await fetch(`${bed.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bed.p.adminKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}',
    });
    expect(formOnOpenAi.status).toBe(415);
  });

  it('streams NDJSON by default (no stream field), as curl from Ollama’s docs gets it', async () => {
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'curl' }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    const lines = ndjsonLines(res.text);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
    expect(lines.slice(0, -1).every((l) => l.done === false)).toBe(true);
    expect(res.headers.get('x-llm-model')).toBe('llama3.2');
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
  });
});
