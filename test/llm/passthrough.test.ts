import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const weather = {
  type: 'function' as const,
  function: { name: 'weather', description: 'the weather', parameters: { type: 'object', properties: {} } },
};

/**
 * Issue 32, item 1: every field the official `openai` client sends reaches the provider (the fake
 * upstream records what it received) or is refused with a 400 naming it.
 */
describe('nothing accepted and dropped: OpenAI fields through the official openai client', () => {
  let bed: LlmTestbed;
  let client: OpenAI;
  const lastSent = () => bed.openai.requests.at(-1)?.body as Record<string, unknown>;
  const lastOllama = () => bed.ollama.requests.at(-1)?.body as Record<string, unknown>;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('an OpenAI upstream receives tool_choice, parallel_tool_calls, reasoning_effort, user, metadata, store, service_tier and max_completion_tokens as sent', async () => {
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'all the options' }],
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      user: 'end-user-7',
      metadata: { team: 'blue' },
      store: true,
      service_tier: 'flex',
      max_completion_tokens: 77,
    });
    const sent = lastSent();
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
    expect(sent.parallel_tool_calls).toBe(false);
    expect(sent.reasoning_effort).toBe('low');
    expect(sent.user).toBe('end-user-7');
    expect(sent.metadata).toEqual({ team: 'blue' });
    expect(sent.store).toBe(true);
    expect(sent.service_tier).toBe('flex');
    // Not rewritten to max_tokens, which reasoning models refuse.
    expect(sent.max_completion_tokens).toBe(77);
    expect(sent.max_tokens).toBeUndefined();
  });

  it('tool_choice none reaches an OpenAI upstream; an Ollama upstream gets no tools at all', async () => {
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'no tools please' }],
      tools: [weather],
      tool_choice: 'none',
    });
    expect(lastSent().tool_choice).toBe('none');
    await client.chat.completions.create({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'no tools please' }],
      tools: [weather],
      tool_choice: 'none',
    });
    expect(lastOllama().tools).toBeUndefined();
  });

  it('the json_schema name and strictness arrive as sent', async () => {
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'city', strict: false, schema: { type: 'object', properties: {} } },
      },
    });
    expect(lastSent().response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'city', strict: false },
    });
  });

  it('an Ollama model: reasoning_effort becomes think, max_completion_tokens num_predict', async () => {
    await client.chat.completions.create({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'think hard' }],
      reasoning_effort: 'high',
      max_completion_tokens: 12,
    });
    expect(lastOllama().think).toBe('high');
    expect((lastOllama().options as Record<string, unknown>).num_predict).toBe(12);
  });

  const refused = async (body: Record<string, unknown>) => {
    const before = bed.ollama.requests.length + bed.openai.requests.length;
    const error = await client.chat.completions
      .create({ messages: [{ role: 'user', content: 'x' }], ...body } as never)
      .then(
        () => null,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(error?.status).toBe(400);
    // Nothing reached a model.
    expect(bed.ollama.requests.length + bed.openai.requests.length).toBe(before);
    return error?.message ?? '';
  };

  it("top_k (Ollama's options, Anthropic's body) reaches an OpenAI-compatible upstream as top_k", async () => {
    const res = await fetch(`${bed.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'sample narrowly' }],
        options: { top_k: 7 },
        stream: false,
      }),
    });
    expect(res.status).toBe(200);
    expect(lastSent().top_k).toBe(7);
  });

  it('a field the model cannot honour is a 400 naming it, not a 200 without it', async () => {
    expect(await refused({ model: 'llama3.2', user: 'u1' })).toMatch(/body\.user/);
    expect(await refused({ model: 'llama3.2', tools: [weather], tool_choice: 'required' })).toMatch(
      /body\.tool_choice/,
    );
    expect(await refused({ model: 'llama3.2', parallel_tool_calls: false })).toMatch(/parallel_tool_calls/);
    expect(await refused({ model: 'builtin/extractive', reasoning_effort: 'low' })).toMatch(
      /reasoning_effort/,
    );
    expect(await refused({ model: 'builtin/extractive', logprobs: true })).toMatch(/body\.logprobs/);
  });

  it('the built-in model: sampling options give one reproducible answer, stop cuts it, penalties are refused', async () => {
    const ask = (extra: Record<string, unknown>) =>
      client.chat.completions.create({
        model: 'builtin/extractive',
        messages: [{ role: 'user', content: 'The sky is blue. The grass is green. What colour is the sky?' }],
        ...extra,
      });
    const plain = (await ask({})).choices[0]!.message.content ?? '';
    const sampled = await ask({ temperature: 1.5, top_p: 0.5, seed: 42 });
    expect(sampled.choices[0]!.message.content).toBe(plain);
    const stopped = await ask({ stop: ['blue'] });
    expect(stopped.choices[0]!.message.content).toBe(plain.slice(0, plain.indexOf('blue')));
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
    expect(await refused({ model: 'builtin/extractive', presence_penalty: 0.5 })).toMatch(
      /body\.presence_penalty/,
    );
    expect(
      await refused({ model: 'builtin/extractive', stop: ['x'], response_format: { type: 'json_object' } }),
    ).toMatch(/body\.stop/);
    const mirostat = await fetch(`${bed.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'builtin/extractive',
        messages: [{ role: 'user', content: 'What colour is the sky?' }],
        options: { mirostat: 2, num_ctx: 4096 },
        stream: false,
      }),
    });
    expect(mirostat.status).toBe(400);
    expect(((await mirostat.json()) as { error: string }).error).toMatch(/body\.options\.mirostat/);
  });

  it('bad input: a tool_choice naming a tool that was not sent, a wrong type, n = 1000', async () => {
    expect(
      await refused({
        model: 'gpt-4o-mini',
        tools: [weather],
        tool_choice: { type: 'function', function: { name: 'nope' } },
      }),
    ).toMatch(/tool_choice\.function\.name/);
    expect(await refused({ model: 'gpt-4o-mini', tool_choice: 'required' })).toMatch(/tool_choice/);
    expect(await refused({ model: 'gpt-4o-mini', parallel_tool_calls: 'yes' })).toMatch(
      /parallel_tool_calls/,
    );
    expect(await refused({ model: 'gpt-4o-mini', n: 1000 })).toMatch(/body\.n/);
  });
});
