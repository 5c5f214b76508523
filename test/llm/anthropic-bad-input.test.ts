import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmTestbed, startLlmTestbed } from './support.js';

interface AnthropicErrorBody {
  type: string;
  error: { type: string; message: string };
  code: string;
}

/** Bad input on the Anthropic paths: a 400 in Anthropic's error body naming the field, never a 500. */
describe('Anthropic Messages API refuses bad input', () => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
  });
  afterAll(() => bed?.close());

  async function send(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages') {
    const res = await fetch(`${bed.url}${path}`, {
      method: 'POST',
      headers: {
        'x-api-key': bed.p.adminKey,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as AnthropicErrorBody };
  }

  const user = [{ role: 'user', content: 'hi' }];
  const tool = { name: 'lookup', input_schema: { type: 'object', properties: {} } };
  const cases: Array<[string, unknown, RegExp]> = [
    ['missing max_tokens', { model: 'gpt-4o-mini', messages: user }, /max_tokens/],
    ['max_tokens as a string', { model: 'gpt-4o-mini', max_tokens: '10', messages: user }, /max_tokens/],
    [
      'temperature above 1',
      { model: 'gpt-4o-mini', max_tokens: 9, temperature: 1.5, messages: user },
      /temperature/,
    ],
    [
      'stop_sequences as a string',
      { model: 'gpt-4o-mini', max_tokens: 9, stop_sequences: 'x', messages: user },
      /stop_sequences/,
    ],
    [
      'a role of system in messages',
      { model: 'gpt-4o-mini', max_tokens: 9, messages: [{ role: 'system', content: 'x' }] },
      /role/,
    ],
    ['no messages', { model: 'gpt-4o-mini', max_tokens: 9, messages: [] }, /messages/],
    [
      'a tool_choice naming a tool not sent',
      {
        model: 'gpt-4o-mini',
        max_tokens: 9,
        tools: [tool],
        tool_choice: { type: 'tool', name: 'other' },
        messages: user,
      },
      /tool_choice\.name names 'other', which is not in tools/,
    ],
    [
      'tool_choice any without tools',
      { model: 'gpt-4o-mini', max_tokens: 9, tool_choice: { type: 'any' }, messages: user },
      /tool_choice\.type/,
    ],
    [
      'a tool without input_schema',
      { model: 'gpt-4o-mini', max_tokens: 9, tools: [{ name: 'x' }], messages: user },
      /tools\.0\.input_schema is required/,
    ],
    [
      'a server tool',
      {
        model: 'gpt-4o-mini',
        max_tokens: 9,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        messages: user,
      },
      /tools\.0\.type/,
    ],
    [
      'an image by URL',
      {
        model: 'gpt-4o-mini',
        max_tokens: 9,
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/' } }],
          },
        ],
      },
      /messages\.0\.content\.0\.source\.type/,
    ],
    [
      'an unknown block type',
      {
        model: 'gpt-4o-mini',
        max_tokens: 9,
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
          },
        ],
      },
      /'document' is not supported/,
    ],
    [
      'a text block without text',
      { model: 'gpt-4o-mini', max_tokens: 9, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      /messages\.0\.content\.0\.text is required/,
    ],
    [
      'a thinking budget over max_tokens',
      {
        model: 'gpt-4o-mini',
        max_tokens: 9,
        thinking: { type: 'enabled', budget_tokens: 2000 },
        messages: user,
      },
      /budget_tokens/,
    ],
    [
      'a container (Anthropic-hosted code execution)',
      { model: 'gpt-4o-mini', max_tokens: 9, container: 'c_1', messages: user },
      /body\.container/,
    ],
    [
      'an output format that is not a JSON schema',
      { model: 'gpt-4o-mini', max_tokens: 9, output_config: { format: { type: 'xml' } }, messages: user },
      /output_config\.format/,
    ],
    [
      'a tool_use block in a user message',
      { model: 'gpt-4o-mini', max_tokens: 9, messages: [{ role: 'user', content: [{ type: 'tool_use' }] }] },
      /tool_use is allowed in assistant messages only/,
    ],
  ];

  for (const [name, body, message] of cases) {
    it(`refuses ${name}`, async () => {
      const before = bed.openai.requests.length;
      const res = await send(body);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('error');
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(res.body.error.message).toMatch(message);
      expect(bed.openai.requests.length).toBe(before);
    });
  }

  it('requires anthropic-version, as Anthropic does', async () => {
    const res = await send(
      { model: 'gpt-4o-mini', max_tokens: 9, messages: user },
      { 'anthropic-version': '' },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('anthropic-version');
  });

  it('answers a missing key with authentication_error and a model outside the registry with not_found_error', async () => {
    const noKey = await send({ model: 'gpt-4o-mini', max_tokens: 9, messages: user }, { 'x-api-key': '' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.type).toBe('authentication_error');
    const count = await send({ model: 'nope', messages: user }, {}, '/v1/messages/count_tokens');
    expect(count.status).toBe(404);
    expect(count.body.error.type).toBe('not_found_error');
  });

  it('refuses a field the answering provider would drop (Ollama cannot be made to call a tool)', async () => {
    const res = await send({
      model: 'llama3.2',
      max_tokens: 9,
      tools: [tool],
      tool_choice: { type: 'any' },
      messages: user,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('tool_choice');
  });

  it('answers a malformed JSON body with a 400 in Anthropic’s body', async () => {
    const res = await fetch(`${bed.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': bed.p.adminKey,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: '{"model": ',
    });
    const body = (await res.json()) as AnthropicErrorBody;
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
