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

  it('count_tokens refuses what /v1/messages refuses: unknown and Anthropic-hosted fields', async () => {
    const count = (body: Record<string, unknown>) =>
      send({ model: 'gpt-4o-mini', messages: user, ...body }, {}, '/v1/messages/count_tokens');
    const unknown = await count({ colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('body.colour');
    const hosted = await count({ mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] });
    expect(hosted.status).toBe(400);
    expect(hosted.body.error.message).toContain('body.mcp_servers');
    // A Messages body reused as it is (max_tokens, temperature) is still counted.
    expect((await count({ max_tokens: 9, temperature: 0.5 })).status).toBe(200);
  });

  it('count_tokens counts an image as Anthropic does: width × height / 750, capped at 1,600', async () => {
    /** The first bytes of a PNG of this size (its signature and IHDR: all the estimate reads). */
    const png = (width: number, height: number) => {
      const head = Buffer.alloc(33);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head);
      head.writeUInt32BE(13, 8);
      head.write('IHDR', 12, 'latin1');
      head.writeUInt32BE(width, 16);
      head.writeUInt32BE(height, 20);
      return head.toString('base64');
    };
    const tokensWith = async (data: string | null) => {
      const content: unknown[] = [{ type: 'text', text: 'what is this?' }];
      if (data) content.push({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } });
      const res = await send(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
        {},
        '/v1/messages/count_tokens',
      );
      expect(res.status).toBe(200);
      return (res.body as unknown as { input_tokens: number }).input_tokens;
    };
    const text = await tokensWith(null);
    expect((await tokensWith(png(1000, 500))) - text).toBe(667);
    // Scaled to 1,568 × 784 first, still above the cap.
    expect((await tokensWith(png(3136, 1568))) - text).toBe(1600);
    // Bytes of no known format: the cap, not 0.
    expect((await tokensWith('AAAA'.repeat(100))) - text).toBe(1600);
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
