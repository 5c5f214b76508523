import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, fakeEmbedding } from '../support/fake-llm/index.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

/** The official `openai` npm client (6.x), unmodified, pointed at the platform with a platform key. */
describe('OpenAI-compatible API through the official openai client', () => {
  let bed: LlmTestbed;
  let client: OpenAI;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('completes a chat, with usage', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'developer', content: 'be terse' },
        { role: 'user', content: 'hello openai' },
      ],
    });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.choices[0]?.message.content).toBe(echoReply('hello openai'));
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.usage?.total_tokens).toBe(
      (res.usage?.prompt_tokens ?? 0) + (res.usage?.completion_tokens ?? 0),
    );
    expect(res.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = bed.openai.requests.at(-1)?.body as { messages: Array<{ role: string }> };
    expect(sent.messages[0]?.role).toBe('system');
  });

  it('streams chunks, with the usage chunk (choices: []) when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream over sse' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    let finish: string | null = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) {
        usage = chunk.usage;
        expect(chunk.choices).toEqual([]);
      }
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe(echoReply('stream over sse'));
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('answers from an Ollama upstream in OpenAI’s shape, streaming and not', async () => {
    const res = await client.chat.completions.create({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'via ollama' }],
    });
    expect(res.choices[0]?.message.content).toBe(echoReply('via ollama'));
    expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'via ollama streaming' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(echoReply('via ollama streaming'));
  });

  it('translates tool calls from an Ollama upstream and tool results back to it', async () => {
    bed.ollama.toolCall = { name: 'lookup_order', arguments: { orderId: 'ord_1' } };
    try {
      const res = await client.chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'where is my order?' }],
        tools: [
          {
            type: 'function',
            function: { name: 'lookup_order', parameters: { type: 'object', properties: {} } },
          },
        ],
      });
      const call = res.choices[0]?.message.tool_calls?.[0];
      expect(res.choices[0]?.finish_reason).toBe('tool_calls');
      expect(call?.type).toBe('function');
      if (call?.type !== 'function') throw new Error('no function call');
      expect(call.function.name).toBe('lookup_order');
      expect(JSON.parse(call.function.arguments)).toEqual({ orderId: 'ord_1' });
      bed.ollama.toolCall = null;
      await client.chat.completions.create({
        model: 'llama3.2',
        messages: [
          { role: 'user', content: 'where is my order?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: '{"status":"shipped"}' },
        ],
      });
      const sent = bed.ollama.requests.at(-1)?.body as { messages: Array<Record<string, unknown>> };
      expect(sent.messages[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ function: { name: 'lookup_order', arguments: { orderId: 'ord_1' } } }],
      });
      expect(sent.messages[2]).toMatchObject({
        role: 'tool',
        content: '{"status":"shipped"}',
        tool_name: 'lookup_order',
      });
    } finally {
      bed.ollama.toolCall = null;
    }
  });

  it('embeds as base64 (the client’s default) and as floats, the same numbers either way', async () => {
    const viaBase64 = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['alpha', 'beta'],
    });
    expect(viaBase64.data.map((d) => d.index)).toEqual([0, 1]);
    const expected = fakeEmbedding('alpha');
    for (const [i, v] of (viaBase64.data[0]?.embedding ?? []).entries())
      expect(v).toBeCloseTo(expected[i] ?? Number.NaN, 5);
    const floats = await client.embeddings.create({
      model: 'builtin/hashed-ngrams',
      input: 'plain floats',
      encoding_format: 'float',
    });
    expect(floats.data[0]?.embedding).toHaveLength(384);
    const again = await client.embeddings.create({ model: 'builtin/hashed-ngrams', input: 'plain floats' });
    for (const [i, v] of (again.data[0]?.embedding ?? []).entries())
      expect(v).toBeCloseTo(floats.data[0]?.embedding[i] ?? Number.NaN, 6);
    expect(floats.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('lists and retrieves models (names with slashes too)', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-4o-mini', 'llama3.2', 'builtin/hashed-ngrams']));
    const one = await client.models.retrieve('builtin/extractive');
    expect(one).toMatchObject({ id: 'builtin/extractive', object: 'model', owned_by: 'builtin' });
  });

  it('errors in OpenAI’s shape: the client raises typed errors', async () => {
    const missing = await client.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    const unauthorized = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: 'PROD_API_wrong', maxRetries: 0 });
    await expect(unauthorized.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const bad = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], temperature: 7 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as Error).message).toMatch(/temperature/);
  });
});
