import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmTestbed, post, startLlmTestbed } from './support.js';

const user = [{ role: 'user', content: 'hi' }];

/** Each malformed field: a 400 naming it, in the surface's own error shape; nothing reaches a model. */
describe('gateway bad input', () => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
  });
  afterAll(() => bed?.close());

  const ollamaCases: Array<[string, string, unknown, string]> = [
    ['/api/chat', 'no model', { messages: user }, 'body.model'],
    ['/api/chat', 'empty model', { model: '', messages: user }, 'body.model'],
    ['/api/chat', 'messages not a list', { model: 'llama3.2', messages: 'hi' }, 'body.messages'],
    [
      '/api/chat',
      'unknown role',
      { model: 'llama3.2', messages: [{ role: 'wizard', content: 'x' }] },
      'body.messages.0.role',
    ],
    [
      '/api/chat',
      'content not text',
      { model: 'llama3.2', messages: [{ role: 'user', content: 5 }] },
      'body.messages.0.content',
    ],
    ['/api/chat', 'stream not boolean', { model: 'llama3.2', messages: user, stream: 'yes' }, 'body.stream'],
    [
      '/api/chat',
      'temperature as text',
      { model: 'llama3.2', messages: user, options: { temperature: 'hot' } },
      'body.options.temperature',
    ],
    ['/api/chat', 'format a number', { model: 'llama3.2', messages: user, format: 7 }, 'body.format'],
    [
      '/api/chat',
      'tool without a name',
      { model: 'llama3.2', messages: user, tools: [{ type: 'function', function: {} }] },
      'body.tools.0.function.name',
    ],
    ['/api/generate', 'prompt not text', { model: 'llama3.2', prompt: ['a'] }, 'body.prompt'],
    ['/api/embed', 'no input', { model: 'nomic-embed-text' }, 'body.input'],
    ['/api/embed', 'input of numbers', { model: 'nomic-embed-text', input: [1, 2] }, 'body.input'],
    ['/api/show', 'model not text', { model: 5 }, 'body.model'],
  ];

  it.each(ollamaCases)('Ollama %s, %s: 400 naming the field', async (path, _what, body, field) => {
    const before = bed.ollama.requests.length;
    const res = await post(bed, path, body);
    expect(res.status, res.text).toBe(400);
    const error = res.json() as {
      error: string;
      code: string;
      details: { fields: Array<{ field: string }> };
    };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(typeof error.error).toBe('string');
    expect(error.error).toContain(field);
    expect(error.details.fields.map((f) => f.field)).toContain(field);
    expect(bed.ollama.requests.length).toBe(before);
  });

  const openAiCases: Array<[string, string, unknown, string]> = [
    ['/v1/chat/completions', 'no messages', { model: 'gpt-4o-mini', messages: [] }, 'body.messages'],
    [
      '/v1/chat/completions',
      'temperature above 2',
      { model: 'gpt-4o-mini', messages: user, temperature: 3 },
      'body.temperature',
    ],
    [
      '/v1/chat/completions',
      'a thousand choices',
      { model: 'gpt-4o-mini', messages: user, n: 1000 },
      'body.n',
    ],
    [
      '/v1/chat/completions',
      'unknown response format',
      { model: 'gpt-4o-mini', messages: user, response_format: { type: 'yaml' } },
      'body.response_format.type',
    ],
    [
      '/v1/chat/completions',
      'json_schema without schema',
      {
        model: 'gpt-4o-mini',
        messages: user,
        response_format: { type: 'json_schema', json_schema: { name: 'x' } },
      },
      'body.response_format.json_schema.schema',
    ],
    [
      '/v1/chat/completions',
      'tool arguments not JSON',
      {
        model: 'gpt-4o-mini',
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      },
      'body.messages.0.tool_calls.0.function.arguments',
    ],
    [
      '/v1/chat/completions',
      'tool message without its call',
      { model: 'gpt-4o-mini', messages: [{ role: 'tool', content: 'r' }] },
      'body.messages.0.tool_call_id',
    ],
    [
      '/v1/chat/completions',
      'image by URL',
      {
        model: 'gpt-4o-mini',
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/x.png' } }],
          },
        ],
      },
      'body.messages.0.content.0.image_url.url',
    ],
    [
      '/v1/chat/completions',
      'a text part without its text (relayed models too)',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      'body.messages.0.content.0.text',
    ],
    [
      '/v1/chat/completions',
      'a message name on an Ollama model',
      { model: 'llama3.2', messages: [{ role: 'user', content: 'hi', name: 'alice' }] },
      'body.messages.0.name',
    ],
    [
      '/v1/embeddings',
      'user on an Ollama model',
      { model: 'nomic-embed-text', input: 'x', user: 'end-user-7' },
      'body.user',
    ],
    [
      '/v1/embeddings',
      'token arrays to an Ollama model',
      { model: 'nomic-embed-text', input: [[1, 2, 3]] },
      'body.input',
    ],
    [
      '/v1/embeddings',
      'unknown encoding',
      { model: 'text-embedding-3-small', input: 'x', encoding_format: 'hex' },
      'body.encoding_format',
    ],
  ];

  it.each(openAiCases)('OpenAI %s, %s: 400 naming the field', async (path, _what, body, field) => {
    const before = bed.openai.requests.length;
    const res = await post(bed, path, body);
    expect(res.status, res.text).toBe(400);
    const error = res.json() as { error: { message: string; type: string }; code: string };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.error.type).toBe('invalid_request_error');
    expect(error.error.message).toContain(field);
    expect(bed.openai.requests.length).toBe(before);
  });

  it('malformed JSON and a wrong content type: 400 and 415 in the surface’s shape', async () => {
    const broken = await post(bed, '/api/chat', '{"model": "llama3.2", "messages": [');
    expect(broken.status).toBe(400);
    expect(broken.json()).toMatchObject({ error: 'Malformed JSON body', code: 'VALIDATION_ERROR' });
    const form = await fetch(`${bed.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(form.status).toBe(415);
    expect(await form.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it('a compressed body (Content-Encoding other than identity): 415 naming the encoding, in each surface’s shape', async () => {
    const before = bed.ollama.requests.length + bed.openai.requests.length;
    const send = (path: string, encoding: string, headers: Record<string, string> = {}) =>
      fetch(`${bed.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bed.p.adminKey}`,
          'content-type': 'application/json',
          'content-encoding': encoding,
          ...headers,
        },
        body: JSON.stringify({ model: 'llama3.2', max_tokens: 5, messages: user, stream: false }),
      });
    const openai = await send('/v1/chat/completions', 'gzip');
    expect(openai.status).toBe(415);
    expect(await openai.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringMatching(/Content-Encoding 'gzip'/) },
    });
    const ollama = await send('/api/chat', 'br');
    expect(ollama.status).toBe(415);
    expect(((await ollama.json()) as { error: string }).error).toMatch(/Content-Encoding 'br'/);
    const anthropic = await send('/v1/messages', 'deflate', { 'anthropic-version': '2023-06-01' });
    expect(anthropic.status).toBe(415);
    expect(await anthropic.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/deflate/) },
    });
    expect(bed.ollama.requests.length + bed.openai.requests.length).toBe(before);
    // identity is no encoding at all.
    expect((await send('/api/chat', 'identity')).status).toBe(200);
  });

  it('a chat model asked for embeddings, or an embedder asked to chat: 400', async () => {
    const embed = await post(bed, '/api/embed', { model: 'llama3.2', input: 'x' });
    expect(embed.status).toBe(400);
    expect(embed.json()).toMatchObject({ error: '"llama3.2" does not support embeddings' });
    const chat = await post(bed, '/v1/chat/completions', { model: 'builtin/hashed-ngrams', messages: user });
    expect(chat.status).toBe(400);
  });

  it('a body over LLM_BODY_LIMIT_BYTES: 413', async () => {
    const huge = 'x'.repeat(21 * 1024 * 1024);
    const res = await post(bed, '/api/chat', {
      model: 'llama3.2',
      messages: [{ role: 'user', content: huge }],
    });
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: expect.any(String) });
  });
});
