import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply } from '../support/fake-llm/index.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'lookup_order',
    description: 'Finds an order',
    input_schema: { type: 'object', properties: { orderId: { type: 'string' } } },
  },
];

/** The official `@anthropic-ai/sdk` (1.x), unmodified, pointed at the platform with a platform key. */
describe('Anthropic Messages API through the official @anthropic-ai/sdk client', () => {
  let bed: LlmTestbed;
  let client: Anthropic;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    client = new Anthropic({ baseURL: bed.url, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('answers a message from an OpenAI upstream, system prompt and options translated', async () => {
    const res = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 64,
      system: 'be terse',
      stop_sequences: ['END'],
      metadata: { user_id: 'user-7' },
      messages: [{ role: 'user', content: 'hello anthropic' }],
    });
    expect(res.type).toBe('message');
    expect(res.role).toBe('assistant');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.id).toMatch(/^msg_/);
    expect(res.content).toEqual([{ type: 'text', text: echoReply('hello anthropic') }]);
    expect(res.stop_reason).toBe('end_turn');
    expect(res.usage.input_tokens).toBeGreaterThan(0);
    expect(res.usage.output_tokens).toBeGreaterThan(0);
    const sent = bed.openai.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 64,
      stop: ['END'],
      user: 'user-7',
      messages: [
        { role: 'system', content: 'be terse' },
        { role: 'user', content: 'hello anthropic' },
      ],
    });
  });

  it('reports max_tokens as the stop reason when the answer was cut', async () => {
    const res = await client.messages.create({
      model: 'llama3.2',
      max_tokens: 2,
      messages: [{ role: 'user', content: 'a long question here' }],
    });
    expect(res.stop_reason).toBe('max_tokens');
    const sent = bed.ollama.requests.at(-1)?.body as { options: Record<string, unknown> };
    expect(sent.options.num_predict).toBe(2);
  });

  it('streams Anthropic events from an Ollama upstream; the helper assembles the message', async () => {
    const stream = client.messages.stream({
      model: 'llama3.2',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'stream me please' }],
    });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    const final = await stream.finalMessage();
    expect(text).toBe(echoReply('stream me please'));
    expect(final.content).toEqual([{ type: 'text', text: echoReply('stream me please') }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('message_start');
    expect(types.slice(1, 2)).toEqual(['content_block_start']);
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThan(1);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('sends the raw SSE frames Anthropic names, ping included', async () => {
    const res = await fetch(`${bed.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': bed.p.adminKey,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        max_tokens: 50,
        stream: true,
        // Sampling fields the 1.x client no longer types, still part of the Messages API.
        temperature: 0.5,
        top_p: 0.9,
        messages: [{ role: 'user', content: 'raw frames' }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const names = [...(await res.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.at(-1)).toBe('message_stop');
    expect(bed.openai.requests.at(-1)?.body).toMatchObject({ temperature: 0.5, top_p: 0.9 });
  });

  it('translates structured output (output_config.format) to the upstream’s JSON schema format', async () => {
    const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] };
    const res = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      output_config: { format: { type: 'json_schema', schema } },
      messages: [{ role: 'user', content: 'as json' }],
    });
    expect(res.content[0]).toEqual({ type: 'text', text: JSON.stringify({ echo: 'as json' }) });
    expect(bed.openai.requests.at(-1)?.body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { schema } },
    });
  });

  it('round-trips a tool call: tool_use from the model, tool_result back to the upstream', async () => {
    bed.openai.toolCall = { name: 'lookup_order', arguments: { orderId: 'ord_1' } };
    try {
      const first = await client.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        tools: TOOLS,
        tool_choice: { type: 'tool', name: 'lookup_order' },
        messages: [{ role: 'user', content: 'where is my order?' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use');
      if (use?.type !== 'tool_use') throw new Error('no tool_use block');
      expect(use.name).toBe('lookup_order');
      expect(use.input).toEqual({ orderId: 'ord_1' });
      const upstream = bed.openai.requests.at(-1)?.body as Record<string, unknown>;
      expect(upstream.tool_choice).toEqual({ type: 'function', function: { name: 'lookup_order' } });
      expect(upstream.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'lookup_order',
            description: 'Finds an order',
            parameters: TOOLS[0]?.input_schema,
          },
        },
      ]);
      bed.openai.toolCall = null;
      const second = await client.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        tools: TOOLS,
        messages: [
          { role: 'user', content: 'where is my order?' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: use.id, content: '{"status":"shipped"}' },
              { type: 'text', text: 'summarise' },
            ],
          },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: echoReply('summarise') }]);
      const sent = bed.openai.requests.at(-1)?.body as { messages: Array<Record<string, unknown>> };
      expect(sent.messages[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: use.id, function: { name: 'lookup_order', arguments: '{"orderId":"ord_1"}' } }],
      });
      expect(sent.messages[2]).toEqual({
        role: 'tool',
        tool_call_id: use.id,
        content: '{"status":"shipped"}',
      });
      expect(sent.messages[3]).toEqual({ role: 'user', content: 'summarise' });
    } finally {
      bed.openai.toolCall = null;
    }
  });

  it('streams a tool call as a tool_use block with input_json_delta', async () => {
    bed.ollama.toolCall = { name: 'lookup_order', arguments: { orderId: 'ord_2' } };
    try {
      const stream = client.messages.stream({
        model: 'llama3.2',
        max_tokens: 100,
        tools: TOOLS,
        messages: [{ role: 'user', content: 'where is order 2?' }],
      });
      let json = '';
      for await (const event of stream)
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
          json += event.delta.partial_json;
      const final = await stream.finalMessage();
      expect(JSON.parse(json)).toEqual({ orderId: 'ord_2' });
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content[0]).toMatchObject({
        type: 'tool_use',
        name: 'lookup_order',
        input: { orderId: 'ord_2' },
      });
    } finally {
      bed.ollama.toolCall = null;
    }
  });

  it('counts tokens of a prompt', async () => {
    const small = await client.messages.countTokens({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const large = await client.messages.countTokens({
      model: 'gpt-4o-mini',
      system: 'a system prompt of several words',
      tools: TOOLS,
      messages: [{ role: 'user', content: 'a much longer question with many more words in it '.repeat(20) }],
    });
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 100);
  });

  it('lists models in Anthropic’s shape (the same path answers OpenAI’s shape without the header)', async () => {
    const page = await client.models.list({ limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.data[0]).toMatchObject({
      type: 'model',
      id: expect.any(String),
      display_name: expect.any(String),
    });
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 3 })) ids.push(model.id);
    expect(ids).toContain('gpt-4o-mini');
    expect(new Set(ids).size).toBe(ids.length);
    const one = await client.models.retrieve('builtin/extractive');
    expect(one).toMatchObject({ type: 'model', id: 'builtin/extractive' });
    const openAiShape = await fetch(`${bed.url}/v1/models`, {
      headers: { authorization: `Bearer ${bed.p.adminKey}` },
    }).then((r) => r.json() as Promise<{ object: string; data: Array<{ id: string }> }>);
    expect(openAiShape.object).toBe('list');
    expect(openAiShape.data.map((m) => m.id).sort()).toEqual([...ids].sort());
  });

  it('answers errors in Anthropic’s body, as the client’s error classes', async () => {
    const missing = await client.messages
      .create({ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    const notFound = missing as InstanceType<typeof Anthropic.NotFoundError>;
    expect(notFound.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(notFound.message).toContain('model "nope" not found');

    const badKey = new Anthropic({ baseURL: bed.url, apiKey: 'sk_not_a_key', maxRetries: 0 });
    const unauthorized = await badKey.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError);

    bed.openai.failNext(400, 1, 'context too long');
    const refused = await client.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as Error).message).toContain('context too long');
  });

  it('ends a stream that fails mid-answer with an error event the client raises', async () => {
    bed.openai.errorAfterChunks = 2;
    try {
      const stream = client.messages.stream({
        model: 'gpt-4o-mini',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'this will break' }],
      });
      await expect(stream.finalMessage()).rejects.toThrow(/failed mid-answer/);
    } finally {
      bed.openai.errorAfterChunks = null;
    }
  });
});
