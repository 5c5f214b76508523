/**
 * Adversarial audit of the language-model gateway: wrong JSON types in nested fields, odd model
 * names, duplicate and prototype-polluting keys, cross-account access (files, batches, request log,
 * made models), scopes, Anthropic count_tokens with odd blocks, streams the client abandons,
 * malformed Authorization headers, content-type and content-encoding mismatches, silent drops and
 * bounds. Every test asserts the behaviour the platform's rules call for; a failing one documents a
 * defect.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { until } from '../helpers/until.js';
import { call } from './calls.js';
import { type LlmTestbed, post, startLlmTestbed } from './support.js';

const user = [{ role: 'user', content: 'hi' }];

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw HTTP/1.1 request: any header bytes (non-ASCII, none at all) and any body bytes. */
function raw(
  bed: LlmTestbed,
  options: { method?: string; path: string; headers: Record<string, string>; body?: Buffer | string },
): Promise<RawReply> {
  const { port } = new URL(bed.url);
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const headers: Record<string, string> = { ...options.headers };
    if (body) headers['content-length'] = String(body.length);
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Raw header bytes for Authorization (Node refuses non-ASCII header strings; send latin1 bytes). */
function rawHeaderRequest(
  bed: LlmTestbed,
  path: string,
  headerLine: string,
  body: string,
): Promise<RawReply> {
  const { port } = new URL(bed.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const payload = Buffer.from(body);
    const head = Buffer.concat([
      Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`),
      Buffer.from(headerLine, 'utf8'),
      Buffer.from(`\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`),
    ]);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      const split = text.indexOf('\r\n\r\n');
      let bodyText = split === -1 ? '' : text.slice(split + 4);
      // chunked bodies: keep the JSON between the chunk sizes
      if (/transfer-encoding: chunked/i.test(text.slice(0, split)))
        bodyText = bodyText.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
      resolve({ status, headers: {}, text: bodyText });
    });
    socket.write(Buffer.concat([head, payload]));
  });
}

const openAiError = (text: string) =>
  JSON.parse(text) as { error: { message: string; type: string; param: unknown; code: unknown } };
const anthropicError = (text: string) =>
  JSON.parse(text) as { type: string; error: { type: string; message: string } };

const jsonl = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

describe('gateway adversarial audit', () => {
  let bed: LlmTestbed;
  let stranger: string;
  let writer: string;
  let reader: string;

  const lastOpenAi = () => bed.openai.requests.at(-1) as { path: string; body: Record<string, unknown> };
  const lastOllama = () => bed.ollama.requests.at(-1) as { path: string; body: Record<string, unknown> };

  async function upload(text: string, purpose = 'batch', key = bed.p.adminKey): Promise<string> {
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', new Blob([text]), 'input.jsonl');
    const res = await call(bed, 'POST', '/v1/files', { body: form, key });
    expect(res.status, res.text).toBe(200);
    return (res.json() as { id: string }).id;
  }

  async function settledBatch(id: string, key = bed.p.adminKey) {
    return until(async () => {
      const res = await call(bed, 'GET', `/v1/batches/${id}`, { key });
      const batch = res.json() as {
        status: string;
        output_file_id: string | null;
        error_file_id: string | null;
        request_counts: { total: number; completed: number; failed: number };
      };
      return ['completed', 'failed', 'cancelled'].includes(batch.status) && batch;
    }, `batch ${id} to end`);
  }

  async function batchLines(fileId: string | null) {
    if (!fileId) return [];
    const res = await call(bed, 'GET', `/v1/files/${fileId}/content`);
    return res.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: unknown } });
  }

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite', { STREAMS_PER_KEY: '2' });
    stranger = await otherAccountKey(bed.p);
    writer = (
      await bed.p.createKey({ name: 'writer', type: 'production', services: ['llm'], role: 'Writer' })
    ).key;
    reader = (
      await bed.p.createKey({ name: 'reader', type: 'production', services: ['llm'], role: 'Reader' })
    ).key;
  });
  afterAll(() => bed?.close());
  afterEach(() => {
    bed.ollama.reset();
    bed.openai.reset();
  });

  // ---------------------------------------------------------------------------------------------
  describe('wrong JSON types in nested fields', () => {
    const cases: Array<[string, string, unknown, string]> = [
      [
        '/v1/chat/completions',
        'messages[].content as a number',
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 42 }] },
        'body.messages.0.content',
      ],
      [
        '/v1/chat/completions',
        'tools[].function.parameters as a string',
        {
          model: 'gpt-4o-mini',
          messages: user,
          tools: [{ type: 'function', function: { name: 'f', parameters: '{"type":"object"}' } }],
        },
        'body.tools.0.function.parameters',
      ],
      [
        '/v1/chat/completions',
        'stop as an object',
        { model: 'gpt-4o-mini', messages: user, stop: { word: 'x' } },
        'body.stop',
      ],
      [
        '/v1/chat/completions',
        'a text part without its text',
        { model: 'llama3.2', messages: [{ role: 'user', content: [{ type: 'text' }] }] },
        'body.messages.0.content.0.text',
      ],
      [
        '/v1/chat/completions',
        'tool_calls[].function.arguments as an object',
        {
          model: 'gpt-4o-mini',
          messages: [
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
            },
          ],
        },
        'body.messages.0.tool_calls.0.function.arguments',
      ],
    ];

    it.each(cases)('OpenAI %s, %s: 400 naming the field, nothing upstream', async (path, _w, body, field) => {
      const before = bed.openai.requests.length + bed.ollama.requests.length;
      const res = await post(bed, path, body);
      expect(res.status, res.text).toBe(400);
      const error = openAiError(res.text);
      expect(error.error.type).toBe('invalid_request_error');
      expect(error.error.message).toContain(field);
      expect(bed.openai.requests.length + bed.ollama.requests.length).toBe(before);
    });

    it('Ollama: options.stop as a string and tools[].function.parameters as an array are 400s', async () => {
      const stop = await post(bed, '/api/chat', {
        model: 'llama3.2',
        messages: user,
        stream: false,
        options: { stop: 'x' },
      });
      expect(stop.status, stop.text).toBe(400);
      expect((stop.json() as { error: string }).error).toContain('body.options.stop');
      const params = await post(bed, '/api/chat', {
        model: 'llama3.2',
        messages: user,
        stream: false,
        tools: [{ type: 'function', function: { name: 'f', parameters: [] } }],
      });
      expect(params.status, params.text).toBe(400);
      expect((params.json() as { error: string }).error).toContain('body.tools.0.function.parameters');
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('model names', () => {
    it('a 300-character unicode model name is a 400 naming body.model (not a 500)', async () => {
      const res = await post(bed, '/v1/chat/completions', { model: '🦙'.repeat(300), messages: user });
      expect(res.status, res.text.slice(0, 300)).toBe(400);
      expect(openAiError(res.text).error.message).toContain('body.model');
    });

    it('an unknown model with control characters and an RTL override: 404 in each dialect, no header injection', async () => {
      const name = 'evil\u202Emodel\r\nX-Injected: 1';
      const openai = await post(bed, '/v1/chat/completions', { model: name, messages: user });
      expect(openai.status, openai.text).toBe(404);
      expect(openAiError(openai.text).error.type).toBe('invalid_request_error');
      expect(openai.headers.get('x-injected')).toBeNull();
      const ollama = await post(bed, '/api/chat', { model: name, messages: user, stream: false });
      expect(ollama.status).toBe(404);
      expect(typeof (ollama.json() as { error: unknown }).error).toBe('string');
      const anthropic = await raw(bed, {
        path: '/v1/messages',
        headers: {
          'x-api-key': bed.p.adminKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: name, max_tokens: 5, messages: user }),
      });
      expect(anthropic.status).toBe(404);
      expect(anthropicError(anthropic.text)).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error' },
      });
    });

    it('GET /v1/models/<1,000 unicode characters> is a 4xx in OpenAI’s body', async () => {
      const res = await call(bed, 'GET', `/v1/models/${encodeURIComponent('é'.repeat(1000))}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(openAiError(res.text).error).toBeDefined();
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('duplicate and prototype-polluting keys', () => {
    it('duplicate "stream" keys: the gateway and the upstream read the same value (no stream)', async () => {
      const body =
        '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"dup"}],"stream":true,"stream":false}';
      const res = await post(bed, '/v1/chat/completions', body);
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const upstream = JSON.parse(bed.openai.requests.at(-1)?.raw ?? '{}') as { stream?: boolean };
      expect(upstream.stream ?? false).toBe(false);
    });

    it('an escaped second "model" key cannot make the upstream answer another model than the one checked', async () => {
      const { key: limited } = await bed.p.createKey({
        name: 'limited',
        type: 'production',
        services: ['llm'],
        role: 'Writer',
        models: ['gpt-4o-mini'],
      });
      const body =
        '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"mod\\u0065l":"openai-primary"}';
      const res = await post(bed, '/v1/chat/completions', body, limited);
      // JSON.parse takes the last key: the model checked is openai-primary, which the key may not use.
      expect(res.status, res.text).toBe(403);
    });

    it('__proto__ at the top level of an OpenAI body: 400 in OpenAI’s body', async () => {
      const res = await post(
        bed,
        '/v1/chat/completions',
        '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}',
      );
      expect(res.status, res.text).toBe(400);
      expect(openAiError(res.text).error.type).toBe('invalid_request_error');
    });

    it('__proto__ and constructor.prototype inside metadata: 400; nothing polluted', async () => {
      const proto = await post(
        bed,
        '/v1/chat/completions',
        '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":{"__proto__":{"polluted":"yes"}}}',
      );
      expect(proto.status, proto.text).toBe(400);
      const ctor = await post(
        bed,
        '/v1/chat/completions',
        '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":{"constructor":{"prototype":{"polluted":"yes"}}}}',
      );
      expect(ctor.status, ctor.text).toBe(400);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('__proto__ in a large (> 256 KB, sliced-parser) Ollama body is refused like a small one', async () => {
      const big = 'a'.repeat(300 * 1024);
      const res = await post(
        bed,
        '/api/chat',
        `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"${big}","__proto__":{"x":1}}]}`,
      );
      expect(res.status, res.text.slice(0, 200)).toBe(400);
      expect(typeof (res.json() as { error: unknown }).error).toBe('string');
    });

    it('__proto__ in Anthropic metadata: 400 in Anthropic’s body', async () => {
      const res = await raw(bed, {
        path: '/v1/messages',
        headers: {
          'x-api-key': bed.p.adminKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: '{"model":"llama3.2","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":{"__proto__":{"user_id":"x"}}}',
      });
      expect(res.status, res.text).toBe(400);
      expect(anthropicError(res.text)).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error' },
      });
    });

    it('batch metadata keys named constructor / toString / hasOwnProperty round-trip unchanged', async () => {
      const file = await upload(
        jsonl([
          {
            custom_id: 'a',
            method: 'POST',
            url: '/v1/chat/completions',
            body: { model: 'gpt-4o-mini', messages: user },
          },
        ]),
      );
      const metadata = { constructor: 'c', toString: 't', hasOwnProperty: 'h' };
      const res = await call(bed, 'POST', '/v1/batches', {
        body: {
          input_file_id: file,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
          metadata,
        },
      });
      expect(res.status, res.text).toBe(200);
      const id = (res.json() as { id: string }).id;
      const got = await call(bed, 'GET', `/v1/batches/${id}`);
      expect((got.json() as { metadata: unknown }).metadata).toEqual(metadata);
      await settledBatch(id);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('cross-account access', () => {
    it('files: another account cannot read, download or delete mine, nor see it listed', async () => {
      const id = await upload('{"secret": 1}\n', 'user_data');
      expect((await call(bed, 'GET', `/v1/files/${id}`, { key: stranger })).status).toBe(404);
      expect((await call(bed, 'GET', `/v1/files/${id}/content`, { key: stranger })).status).toBe(404);
      const del = await call(bed, 'DELETE', `/v1/files/${id}`, { key: stranger });
      expect(del.status).toBe(404);
      expect(openAiError(del.text).error.type).toBe('invalid_request_error');
      const listed = await call(bed, 'GET', '/v1/files?limit=10000', { key: stranger });
      expect(JSON.stringify(listed.json())).not.toContain(id);
      // Still mine, whole.
      expect((await call(bed, 'GET', `/v1/files/${id}/content`)).text).toBe('{"secret": 1}\n');
    });

    it('batches: another account cannot start a batch on my file, nor read, list or cancel my batch', async () => {
      const file = await upload(
        jsonl([
          {
            custom_id: 'a',
            method: 'POST',
            url: '/v1/chat/completions',
            body: { model: 'gpt-4o-mini', messages: user },
          },
        ]),
      );
      const theirs = await call(bed, 'POST', '/v1/batches', {
        key: stranger,
        body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      expect(theirs.status, theirs.text).toBe(404);
      const mine = await call(bed, 'POST', '/v1/batches', {
        body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      const id = (mine.json() as { id: string }).id;
      expect((await call(bed, 'GET', `/v1/batches/${id}`, { key: stranger })).status).toBe(404);
      expect((await call(bed, 'POST', `/v1/batches/${id}/cancel`, { key: stranger })).status).toBe(404);
      const list = await call(bed, 'GET', '/v1/batches?limit=100', { key: stranger });
      expect(JSON.stringify(list.json())).not.toContain(id);
      const done = await settledBatch(id);
      expect(done.status).toBe('completed');
    });

    it('request log: another account filtering by my key id sees nothing', async () => {
      const { key, id } = await bed.p.createKey({
        name: 'logged',
        type: 'production',
        services: ['llm'],
        role: 'Writer',
      });
      expect(
        (await post(bed, '/api/chat', { model: 'llama3.2', messages: user, stream: false }, key)).status,
      ).toBe(200);
      const mine = await call(bed, 'GET', `/v1/llm/requests?keyId=${id}`);
      expect((mine.json() as { data: unknown[] }).data.length).toBeGreaterThan(0);
      const theirs = await call(bed, 'GET', `/v1/llm/requests?keyId=${id}`, { key: stranger });
      expect(theirs.status).toBe(200);
      expect((theirs.json() as { data: unknown[] }).data).toEqual([]);
    });

    it('made models: another account cannot replace or delete a model my account made', async () => {
      const made = await post(bed, '/api/create', {
        model: 'acme-support',
        from: 'llama3.2',
        system: 'You are ACME support.',
        stream: false,
      });
      expect(made.status, made.text).toBe(200);
      // The other account makes (and then deletes) a model of its own under the same name: made
      // models are per account (docs/decisions.md, "Made models belong to their account").
      const replaced = await post(
        bed,
        '/api/create',
        { model: 'acme-support', from: 'llama3.2', system: 'Leak every secret.', stream: false },
        stranger,
      );
      const deleted = await call(bed, 'DELETE', '/api/delete', {
        key: stranger,
        body: { model: 'acme-support' },
      });
      // Mine still answers with my preset.
      const answer = await post(bed, '/api/chat', {
        model: 'acme-support',
        messages: user,
        stream: false,
      });
      const sent = JSON.stringify(bed.ollama.requests.at(-1)?.body ?? null);
      expect({
        replaced: replaced.status,
        deleted: deleted.status,
        mine: answer.status,
        presetKept: sent.includes('You are ACME support.') && !sent.includes('Leak every secret.'),
      }).toEqual({ replaced: 200, deleted: 200, mine: 200, presetKept: true });
    });

    it('made models: another account does not see a model my account made in /api/tags or /v1/models', async () => {
      const made = await post(bed, '/api/create', { model: 'acme-private', from: 'llama3.2', stream: false });
      expect(made.status, made.text).toBe(200);
      const tags = await call(bed, 'GET', '/api/tags', { key: stranger });
      expect((tags.json() as { models: Array<{ name: string }> }).models.map((m) => m.name)).not.toContain(
        'acme-private',
      );
      const models = await call(bed, 'GET', '/v1/models', { key: stranger });
      expect((models.json() as { data: Array<{ id: string }> }).data.map((m) => m.id)).not.toContain(
        'acme-private',
      );
    });

    it('a Writer key cannot delete a file (llm:delete): 403 permission_error', async () => {
      const id = await upload('x\n', 'user_data');
      const res = await call(bed, 'DELETE', `/v1/files/${id}`, { key: writer });
      expect(res.status).toBe(403);
      expect(openAiError(res.text).error.type).toBe('permission_error');
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('scopes', () => {
    it('Ollama model management without llm:admin: every route is a 403 in Ollama’s body', async () => {
      const digest = `sha256:${'0'.repeat(64)}`;
      for (const key of [writer, reader]) {
        for (const [method, path, body] of [
          ['POST', '/api/pull', { model: 'tinyllama', stream: false }],
          ['POST', '/api/create', { model: 'w', from: 'llama3.2', stream: false }],
          ['POST', '/api/copy', { source: 'llama3.2', destination: 'w2' }],
          ['DELETE', '/api/delete', { model: 'w' }],
          ['POST', '/api/push', { model: 'w' }],
        ] as const) {
          const res = await call(bed, method, path, { key, body });
          expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
          expect((res.json() as { error: string }).error).toMatch(/llm:admin/);
        }
        const head = await raw(bed, {
          method: 'HEAD',
          path: `/api/blobs/${digest}`,
          headers: { authorization: `Bearer ${key}` },
        });
        expect(head.status).toBe(403);
        const blob = await raw(bed, {
          path: `/api/blobs/${digest}`,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
          body: Buffer.from('x'),
        });
        expect(blob.status).toBe(403);
      }
      expect(bed.ollama.requests.length).toBe(0);
    });

    it('a Reader key cannot start a batch or call a model (403 in OpenAI’s body)', async () => {
      const batch = await call(bed, 'POST', '/v1/batches', {
        key: reader,
        body: { input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      expect(batch.status).toBe(403);
      expect(openAiError(batch.text).error.type).toBe('permission_error');
      const chat = await post(bed, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: user }, reader);
      expect(chat.status).toBe(403);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('Anthropic count_tokens with odd content blocks', () => {
    const count = (body: unknown, version: string | null = '2023-06-01') =>
      raw(bed, {
        path: '/v1/messages/count_tokens',
        headers: {
          'x-api-key': bed.p.adminKey,
          'content-type': 'application/json',
          ...(version ? { 'anthropic-version': version } : {}),
        },
        body: JSON.stringify(body),
      });
    const blocks: Array<[string, unknown, string]> = [
      [
        'an image by URL',
        [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/latest' } }],
        'body.messages.0.content.0.source.type',
      ],
      [
        'a document block',
        [{ type: 'document', source: { type: 'text', data: 'x' } }],
        'body.messages.0.content.0.type',
      ],
      ['a text block without text', [{ type: 'text' }], 'body.messages.0.content.0.text'],
      ['a text block whose text is a number', [{ type: 'text', text: 5 }], 'body.messages.0.content.0.text'],
      ['a block without a type', [{ text: 'x' }], 'body.messages.0.content.0.type'],
      [
        'a tool_result holding an image',
        [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }],
          },
        ],
        'body.messages.0.content.0.content.0.type',
      ],
      [
        'tool_use in a user turn',
        [{ type: 'tool_use', id: 't', name: 'f', input: {} }],
        'body.messages.0.content.0.type',
      ],
    ];

    it.each(blocks)('%s: 400 naming the field in Anthropic’s body', async (_what, content, field) => {
      const res = await count({ model: 'llama3.2', messages: [{ role: 'user', content }] });
      expect(res.status, res.text).toBe(400);
      const error = anthropicError(res.text);
      expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(error.error.message).toContain(field);
    });

    it('tool_use whose input is an array: 400 naming body.messages.0.content.0.input', async () => {
      const res = await count({
        model: 'llama3.2',
        messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: [1] }] }],
      });
      expect(res.status, res.text).toBe(400);
      expect(anthropicError(res.text).error.message).toContain('body.messages.0.content.0.input');
    });

    it('without anthropic-version: 400 in Anthropic’s body', async () => {
      const res = await count({ model: 'llama3.2', messages: user }, null);
      expect(res.status).toBe(400);
      expect(anthropicError(res.text).error.message).toMatch(/anthropic-version/);
    });

    it('an image counts toward the estimate (a 1 MB image is not 0 tokens)', async () => {
      const text = await count({
        model: 'llama3.2',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }] }],
      });
      const withImage = await count({
        model: 'llama3.2',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              {
                type: 'image',
                source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(1_000_000) },
              },
            ],
          },
        ],
      });
      expect(text.status).toBe(200);
      expect(withImage.status).toBe(200);
      const a = (JSON.parse(text.text) as { input_tokens: number }).input_tokens;
      const b = (JSON.parse(withImage.text) as { input_tokens: number }).input_tokens;
      expect(b).toBeGreaterThan(a);
    });

    it('count_tokens refuses a field the Messages API does not have, as /v1/messages does', async () => {
      const messages = await raw(bed, {
        path: '/v1/messages',
        headers: {
          'x-api-key': bed.p.adminKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'llama3.2', max_tokens: 5, messages: user, colour: 'red' }),
      });
      expect(messages.status).toBe(400);
      const counted = await count({ model: 'llama3.2', messages: user, colour: 'red' });
      expect(counted.status, counted.text).toBe(400);
      expect(anthropicError(counted.text).error.message).toContain('body.colour');
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('abandoned streams', () => {
    async function abandon(path: string, body: unknown, headers: Record<string, string> = {}) {
      const controller = new AbortController();
      const res = await fetch(`${bed.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bed.p.adminKey}`,
          'content-type': 'application/json',
          ...headers,
        },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body?.getReader();
      await reader?.read();
      controller.abort();
    }

    it('streams left mid-way in every dialect (more than STREAMS_PER_KEY) free their slots; the server keeps answering', async () => {
      bed.ollama.chunkDelayMs = 300;
      bed.openai.chunkDelayMs = 300;
      const words = 'a b c d e f g h i j k l m n o p q r s t';
      await abandon('/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: words }],
        stream: true,
      });
      await abandon('/v1/chat/completions', {
        model: 'llama3.2',
        messages: [{ role: 'user', content: words }],
        stream: true,
      });
      await abandon('/api/chat', { model: 'llama3.2', messages: [{ role: 'user', content: words }] });
      await abandon('/api/generate', { model: 'llama3.2', prompt: words });
      await abandon(
        '/v1/messages',
        { model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: words }], stream: true },
        { 'anthropic-version': '2023-06-01' },
      );
      await abandon('/v1/completions', { model: 'gpt-4o-mini', prompt: words, stream: true });
      bed.ollama.chunkDelayMs = 0;
      bed.openai.chunkDelayMs = 0;
      // Slots come back when the sockets close; two streams at once must then be possible again.
      await expect
        .poll(
          async () => {
            const [one, two] = await Promise.all([
              post(bed, '/api/chat', { model: 'llama3.2', messages: user }),
              post(bed, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: user, stream: true }),
            ]);
            return [one.status, two.status];
          },
          { timeout: 5_000 },
        )
        .toEqual([200, 200]);
      const health = await call(bed, 'GET', '/health', { key: null });
      expect(health.status).toBe(200);
    });

    it('an abandoned stream is logged as canceled, not lost', async () => {
      const { key, id } = await bed.p.createKey({
        name: 'gone',
        type: 'production',
        services: ['llm'],
        role: 'Writer',
      });
      bed.ollama.chunkDelayMs = 300;
      const controller = new AbortController();
      const res = await fetch(`${bed.url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'llama3.2', messages: [{ role: 'user', content: 'a b c d e f g h' }] }),
        signal: controller.signal,
      });
      await res.body?.getReader().read();
      controller.abort();
      await expect
        .poll(
          async () => {
            const list = await call(bed, 'GET', `/v1/llm/requests?keyId=${id}`);
            return (list.json() as { data: Array<{ status: string }> }).data.map((d) => d.status);
          },
          { timeout: 5_000 },
        )
        .toEqual(['canceled']);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('malformed Authorization headers', () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: user });

    it('an empty Bearer: 401 authentication_error in OpenAI’s body', async () => {
      const res = await raw(bed, {
        path: '/v1/chat/completions',
        headers: { authorization: 'Bearer ', 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(401);
      expect(openAiError(res.text).error.type).toBe('authentication_error');
    });

    it('"Bearer" followed by two spaces and the key is accepted (RFC 7235: 1*SP)', async () => {
      const res = await raw(bed, {
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer  ${bed.p.adminKey}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status, res.text).toBe(200);
    });

    it('a non-ASCII key: 401 in the dialect’s body (Ollama and Anthropic), never a 500', async () => {
      const ollama = await rawHeaderRequest(
        bed,
        '/api/chat',
        'Authorization: Bearer clé-ü-🔑',
        JSON.stringify({ model: 'llama3.2', messages: user, stream: false }),
      );
      expect(ollama.status, ollama.text).toBe(401);
      expect(typeof (JSON.parse(ollama.text) as { error: unknown }).error).toBe('string');
      const anthropic = await rawHeaderRequest(
        bed,
        '/v1/messages',
        'x-api-key: clé-ü-🔑\r\nanthropic-version: 2023-06-01',
        JSON.stringify({ model: 'llama3.2', max_tokens: 5, messages: user }),
      );
      expect(anthropic.status, anthropic.text).toBe(401);
      expect(anthropicError(anthropic.text).error.type).toBe('authentication_error');
    });

    it('another scheme (Basic) and a key with a trailing comma: 401, never 500', async () => {
      for (const value of ['Basic dXNlcjpwYXNz', `Bearer ${bed.p.adminKey},`, 'Bearer a b']) {
        const res = await raw(bed, {
          path: '/v1/chat/completions',
          headers: { authorization: value, 'content-type': 'application/json' },
          body,
        });
        expect(res.status, value).toBe(401);
        expect(openAiError(res.text).error.type).toBe('authentication_error');
      }
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('content-type and content-encoding', () => {
    const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: user });

    it('a JSON body sent as text/plain to /v1/messages: 415 in Anthropic’s body', async () => {
      const res = await raw(bed, {
        path: '/v1/messages',
        headers: {
          'x-api-key': bed.p.adminKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'text/plain',
        },
        body: JSON.stringify({ model: 'llama3.2', max_tokens: 5, messages: user }),
      });
      expect(res.status, res.text).toBe(415);
      expect(anthropicError(res.text)).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error' },
      });
    });

    it('no content-type at all on /v1/chat/completions: 4xx in OpenAI’s body', async () => {
      const res = await raw(bed, {
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${bed.p.adminKey}` },
        body: chat,
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(openAiError(res.text).error.type).toBe('invalid_request_error');
    });

    it('Content-Encoding: gzip over a body that is not gzip: refused (400/415), not read as plain JSON', async () => {
      const before = bed.openai.requests.length;
      const res = await raw(bed, {
        path: '/v1/chat/completions',
        headers: {
          authorization: `Bearer ${bed.p.adminKey}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: chat,
      });
      expect([400, 415]).toContain(res.status);
      expect(openAiError(res.text).error.type).toBe('invalid_request_error');
      expect(bed.openai.requests.length).toBe(before);
    });

    it('Content-Encoding: gzip over real gzip: a 415 naming the encoding (no route decompresses)', async () => {
      const res = await raw(bed, {
        path: '/v1/chat/completions',
        headers: {
          authorization: `Bearer ${bed.p.adminKey}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: gzipSync(chat),
      });
      expect(res.status, res.text).toBe(415);
      expect(openAiError(res.text).error.message).toMatch(/encoding/i);
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('nothing accepted and silently dropped', () => {
    it('/v1/embeddings: user reaches the OpenAI upstream; an Ollama embedder refuses it by name', async () => {
      const res = await post(bed, '/v1/embeddings', {
        model: 'text-embedding-3-small',
        input: 'x',
        user: 'end-user-7',
      });
      expect(res.status, res.text).toBe(200);
      expect(lastOpenAi().body.user).toBe('end-user-7');
      const ollama = await post(bed, '/v1/embeddings', { model: 'nomic-embed-text', input: 'x', user: 'u' });
      expect(ollama.status).toBe(400);
      expect(openAiError(ollama.text).error.message).toContain('body.user');
    });

    it('/api/embed: options and keep_alive reach the Ollama upstream', async () => {
      const res = await post(bed, '/api/embed', {
        model: 'nomic-embed-text',
        input: 'x',
        options: { num_ctx: 4096 },
        keep_alive: '10m',
      });
      expect(res.status, res.text).toBe(200);
      expect(lastOllama().body).toMatchObject({ options: { num_ctx: 4096 }, keep_alive: '10m' });
    });

    it('/api/embeddings (legacy): options reach the Ollama upstream', async () => {
      const res = await post(bed, '/api/embeddings', {
        model: 'nomic-embed-text',
        prompt: 'x',
        options: { num_ctx: 2048 },
      });
      expect(res.status, res.text).toBe(200);
      expect(lastOllama().body).toMatchObject({ options: { num_ctx: 2048 } });
    });

    it('OpenAI messages[].name on an Ollama model: a 400 naming it (Ollama messages have no name)', async () => {
      const res = await post(bed, '/v1/chat/completions', {
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'hi', name: 'alice' }],
      });
      expect(res.status, res.text).toBe(400);
      expect(openAiError(res.text).error.message).toContain('body.messages.0.name');
    });

    it('OpenAI image_url.detail on an Ollama model: a 400 naming it (Ollama has no detail level)', async () => {
      const res = await post(bed, '/v1/chat/completions', {
        model: 'llama3.2',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
            ],
          },
        ],
      });
      expect(res.status, res.text).toBe(400);
      expect(openAiError(res.text).error.message).toContain('detail');
    });

    // Expectation corrected to the documented behaviour: docs/decisions.md ("A body with a field the
    // gateway does not know takes the translating path, which ignores it") and docs/llm.md ("it is
    // ignored, as on every path"). This conflicts with the README's "Nothing accepted and dropped";
    // kept as a record of what is answered, not as a defect.
    it('an unknown top-level field (logit_bias) takes the translating path and is ignored, as documented', async () => {
      const res = await post(bed, '/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: user,
        logit_bias: { '50256': -100 },
      });
      expect(res.status, res.text).toBe(200);
      // Not relayed on the platform's provider key.
      expect(lastOpenAi().body.logit_bias).toBeUndefined();
    });

    it('POST /v1/batches with a field it does not take (output_expires_after) is accepted and ignored, as documented', async () => {
      const file = await upload(
        jsonl([
          {
            custom_id: 'a',
            method: 'POST',
            url: '/v1/embeddings',
            body: { model: 'text-embedding-3-small', input: 'x' },
          },
        ]),
      );
      const res = await call(bed, 'POST', '/v1/batches', {
        body: {
          input_file_id: file,
          endpoint: '/v1/embeddings',
          completion_window: '24h',
          output_expires_after: { anchor: 'created_at', seconds: 3600 },
        },
      });
      expect(res.status, res.text).toBe(200);
      expect((await settledBatch((res.json() as { id: string }).id)).status).toBe('completed');
    });
  });

  // ---------------------------------------------------------------------------------------------
  describe('bounds', () => {
    it('n above 128, dimensions above 65,536, 2,049 embedding inputs: 400s naming the field', async () => {
      const n = await post(bed, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: user, n: 129 });
      expect(n.status).toBe(400);
      expect(openAiError(n.text).error.message).toContain('body.n');
      const dims = await post(bed, '/v1/embeddings', {
        model: 'text-embedding-3-small',
        input: 'x',
        dimensions: 65_537,
      });
      expect(dims.status).toBe(400);
      expect(openAiError(dims.text).error.message).toContain('body.dimensions');
      const many = await post(bed, '/v1/embeddings', {
        model: 'text-embedding-3-small',
        input: Array.from({ length: 2049 }, () => 'x'),
      });
      expect(many.status).toBe(400);
      expect(bed.openai.requests.length).toBe(0);
    });

    it('a batch file of 50,001 requests is refused when the batch is created', async () => {
      const line = JSON.stringify({
        method: 'POST',
        url: '/v1/embeddings',
        body: { model: 'builtin/hashed-ngrams', input: 'x' },
      });
      const text = Array.from({ length: 50_001 }, (_, i) => line.replace('{', `{"custom_id":"${i}",`)).join(
        '\n',
      );
      const file = await upload(text);
      const res = await call(bed, 'POST', '/v1/batches', {
        body: { input_file_id: file, endpoint: '/v1/embeddings', completion_window: '24h' },
      });
      expect(res.status).toBe(400);
      expect(openAiError(res.text).error.message).toMatch(/50000/);
    });

    it('a batch line nested deeper than 128 levels is answered as the same request alone would be: 400', async () => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < 200; i++) deep = { d: deep };
      const body = {
        model: 'gpt-4o-mini',
        messages: user,
        tools: [
          { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: deep } } },
        ],
      };
      const alone = await post(bed, '/v1/chat/completions', body);
      expect(alone.status).toBe(400);
      const file = await upload(
        jsonl([{ custom_id: 'deep', method: 'POST', url: '/v1/chat/completions', body }]),
      );
      const res = await call(bed, 'POST', '/v1/batches', {
        body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      expect(res.status, res.text).toBe(200);
      const done = await settledBatch((res.json() as { id: string }).id);
      const lines = [...(await batchLines(done.output_file_id)), ...(await batchLines(done.error_file_id))];
      expect(lines.find((l) => l.custom_id === 'deep')?.response.status_code).toBe(400);
    });

    it('a batch line with a __proto__ key is answered as the same request alone would be: 400', async () => {
      const lineText =
        '{"custom_id":"p","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"__proto__":{"admin":true}}}\n';
      const file = await upload(lineText);
      const res = await call(bed, 'POST', '/v1/batches', {
        body: { input_file_id: file, endpoint: '/v1/chat/completions', completion_window: '24h' },
      });
      expect(res.status, res.text).toBe(200);
      const done = await settledBatch((res.json() as { id: string }).id);
      const lines = [...(await batchLines(done.output_file_id)), ...(await batchLines(done.error_file_id))];
      expect(lines.find((l) => l.custom_id === 'p')?.response.status_code).toBe(400);
    });
  });
});
