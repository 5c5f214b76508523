import { createHash } from 'node:crypto';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const dialects = await testDialects();

/**
 * Issue 32: Ollama's model management through the official `ollama` client, mapped onto the
 * registry (kept in the database) behind `llm:admin`; pulls go to the fake Ollama server.
 */
describe.each(dialects)('Ollama model management on %s', (dialect) => {
  let bed: LlmTestbed;
  let ollama: Ollama;
  let writer: Ollama;
  const lastOllama = () => bed.ollama.requests.at(-1) as { path: string; body: Record<string, unknown> };
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: unknown) => e as { status_code?: number; error?: string },
    );

  beforeAll(async () => {
    // The fake Ollama is also the default server (OLLAMA_URL) where unknown names are pulled.
    bed = await startLlmTestbed(dialect, { LLM_BLOBS_MAX_BYTES_PER_ACCOUNT: '1000000' });
    const clientFor = (key: string) =>
      new Ollama({ host: bed.url, headers: { authorization: `Bearer ${key}` } });
    ollama = clientFor(bed.p.adminKey);
    const { key } = await bed.p.createKey({
      name: 'w',
      type: 'development',
      services: ['llm'],
      role: 'Writer',
    });
    writer = clientFor(key);
  });
  afterAll(() => bed?.close());

  it('create makes a model from a registry model; its SYSTEM and PARAMETERs reach the upstream under the request', async () => {
    const progress = await ollama.create({
      model: 'terse',
      from: 'llama3.2',
      system: 'Answer in one word.',
      parameters: { temperature: 0.1, num_ctx: 4096, stop: ['END'] },
      stream: true,
    });
    const statuses: string[] = [];
    for await (const line of progress) statuses.push(line.status);
    expect(statuses.at(-1)).toBe('success');
    expect((await ollama.list()).models.map((m) => m.name)).toContain('terse');

    await ollama.chat({ model: 'terse', messages: [{ role: 'user', content: 'hello' }], stream: false });
    const sent = lastOllama();
    expect(sent.path).toBe('/api/chat');
    expect(sent.body.model).toBe('llama3.2');
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'Answer in one word.' },
      { role: 'user', content: 'hello' },
    ]);
    expect(sent.body.options).toEqual({ temperature: 0.1, num_ctx: 4096, stop: ['END'] });

    // The request's own options and system prompt win.
    await ollama.chat({
      model: 'terse',
      messages: [
        { role: 'system', content: 'mine' },
        { role: 'user', content: 'hi' },
      ],
      options: { temperature: 0.9 },
      stream: false,
    });
    expect(lastOllama().body.options).toEqual({ temperature: 0.9, num_ctx: 4096, stop: ['END'] });
    expect((lastOllama().body.messages as unknown[])[0]).toEqual({ role: 'system', content: 'mine' });
  });

  it('a legacy Modelfile is read; TEMPLATE, files and unknown instructions are 400s naming them', async () => {
    const res = await fetch(`${bed.url}/api/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'from-file',
        modelfile: 'FROM gpt-4o-mini\nPARAMETER seed 42\nSYSTEM """You are\nbrief."""\n',
        stream: false,
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'success' });
    await ollama.chat({ model: 'from-file', messages: [{ role: 'user', content: 'x' }], stream: false });
    const sent = bed.openai.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent.seed).toBe(42);
    expect((sent.messages as unknown[])[0]).toEqual({ role: 'system', content: 'You are\nbrief.' });

    const template = await failure(
      ollama.create({ model: 'x', from: 'llama3.2', template: '{{ .Prompt }}', stream: false }),
    );
    expect(template?.status_code).toBe(400);
    expect(template?.error).toMatch(/body\.template/);
    const files = await failure(
      ollama.create({ model: 'x', from: 'llama3.2', files: { 'a.gguf': 'sha256:00' }, stream: false } as {
        model: string;
        stream: false;
      }),
    );
    expect(files?.error).toMatch(/body\.files/);
    const unknown = await failure(
      fetch(`${bed.url}/api/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.p.adminKey}` },
        body: JSON.stringify({ model: 'x', modelfile: 'FROM llama3.2\nWIBBLE on' }),
      }).then(async (r) => {
        if (r.status !== 200)
          throw { status_code: r.status, error: ((await r.json()) as { error: string }).error };
      }),
    );
    expect(unknown?.status_code).toBe(400);
    expect(unknown?.error).toMatch(/WIBBLE/);
    const noBase = await failure(ollama.create({ model: 'x', from: 'not-here', stream: false }));
    expect(noBase?.status_code).toBe(404);
  });

  it('copy and delete work on made models; configured ones cannot be replaced or deleted', async () => {
    await ollama.copy({ source: 'terse', destination: 'terse-2' });
    await ollama.chat({ model: 'terse-2', messages: [{ role: 'user', content: 'hey' }], stream: false });
    expect((lastOllama().body.messages as unknown[])[0]).toEqual({
      role: 'system',
      content: 'Answer in one word.',
    });
    await ollama.delete({ model: 'terse-2' });
    const gone = await failure(ollama.chat({ model: 'terse-2', messages: [{ role: 'user', content: 'x' }] }));
    expect(gone?.status_code).toBe(404);
    expect((await failure(ollama.delete({ model: 'terse-2' })))?.status_code).toBe(404);
    const configured = await failure(ollama.delete({ model: 'llama3.2' }));
    expect(configured?.status_code).toBe(400);
    expect(configured?.error).toMatch(/configured/);
    expect((await failure(ollama.copy({ source: 'terse', destination: 'gpt-4o-mini' })))?.status_code).toBe(
      400,
    );
  });

  it('pull streams the Ollama server’s progress and registers a model it did not have', async () => {
    const progress = await ollama.pull({ model: 'qwen3:0.6b', stream: true });
    const statuses: string[] = [];
    for await (const line of progress) statuses.push(line.status);
    expect(statuses[0]).toBe('pulling manifest');
    expect(statuses.at(-1)).toBe('success');
    expect(lastOllama().path).toBe('/api/pull');
    await ollama.chat({ model: 'qwen3:0.6b', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect(lastOllama().body.model).toBe('qwen3:0.6b');
    // A model of another provider has nothing to download.
    expect(await ollama.pull({ model: 'gpt-4o-mini', stream: false })).toEqual({ status: 'success' });
    const missing = await failure(ollama.pull({ model: 'no-such-model', stream: false }));
    expect(missing?.status_code).toBe(400);
    expect(missing?.error).toMatch(/file does not exist/);
  });

  it('push is a clear 400; blobs are kept by digest, bounded and checked', async () => {
    const push = await failure(ollama.push({ model: 'terse', stream: false }));
    expect(push?.status_code).toBe(400);
    expect(push?.error).toMatch(/no model registry to push to/);

    const data = Buffer.from('a small adapter file');
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const blob = (method: string, d: string, body?: Buffer) =>
      fetch(`${bed.url}/api/blobs/${d}`, {
        method,
        headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/octet-stream' },
        ...(body ? { body } : {}),
      });
    expect((await blob('HEAD', digest)).status).toBe(404);
    expect((await blob('POST', digest, data)).status).toBe(201);
    expect((await blob('HEAD', digest)).status).toBe(200);
    const mismatch = await blob('POST', digest, Buffer.from('other bytes'));
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: string }).error).toMatch(/digest mismatch/);
    expect((await blob('HEAD', 'sha256:nothex')).status).toBe(400);
    const big = await blob('POST', digest, Buffer.alloc(33 * 1024 * 1024));
    expect(big.status).toBe(413);
  });

  it("blobs are an account's: another account is not told of them, and each account's are bounded", async () => {
    const otherKey = await otherAccountKey(bed.p);
    const blob = (key: string, method: string, body: Buffer) =>
      fetch(`${bed.url}/api/blobs/sha256:${createHash('sha256').update(body).digest('hex')}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
        ...(method === 'POST' ? { body } : {}),
      });
    const part = (n: number) => Buffer.alloc(400_000, n);
    expect((await blob(otherKey, 'POST', part(1))).status).toBe(201);
    expect((await blob(bed.p.adminKey, 'HEAD', part(1))).status).toBe(404);
    expect((await blob(otherKey, 'HEAD', part(1))).status).toBe(200);
    expect((await blob(otherKey, 'POST', part(2))).status).toBe(201);
    // 1,000,000 bytes per account here: a third 400 KB blob is refused, the same bytes again are not.
    const full = await blob(otherKey, 'POST', part(3));
    expect(full.status).toBe(413);
    expect(((await full.json()) as { error: string }).error).toContain('LLM_BLOBS_MAX_BYTES_PER_ACCOUNT');
    expect((await blob(otherKey, 'POST', part(2))).status).toBe(201);
    // Another account's blobs do not count against this one.
    expect((await blob(bed.p.adminKey, 'POST', part(3))).status).toBe(201);
  });

  it("a made model is its account's: another account neither sees, uses, replaces nor deletes it, and has its own of the same name", async () => {
    const otherKey = `Bearer ${await otherAccountKey(bed.p)}`;
    const other = new Ollama({ host: bed.url, headers: { authorization: otherKey } });
    await ollama.create({
      model: 'acme-support',
      from: 'llama3.2',
      system: 'You are ACME support.',
      stream: false,
    });
    await ollama.copy({ source: 'acme-support', destination: 'acme-copy' });

    // Not listed to the other account, and not found by it (Ollama's list, OpenAI's, a chat).
    const otherNames = (await other.list()).models.map((m) => m.name);
    expect(otherNames).not.toContain('acme-support');
    expect(otherNames).not.toContain('acme-copy');
    expect(otherNames).toContain('llama3.2');
    const openAiList = (await (
      await fetch(`${bed.url}/v1/models`, { headers: { authorization: otherKey } })
    ).json()) as {
      data: Array<{ id: string }>;
    };
    expect(openAiList.data.map((m) => m.id)).not.toContain('acme-support');
    const chat = await failure(
      other.chat({ model: 'acme-support', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(chat?.status_code).toBe(404);
    expect((await failure(other.copy({ source: 'acme-support', destination: 'stolen' })))?.status_code).toBe(
      404,
    );

    // Deleting or replacing it from the other account touches only that account's models.
    expect((await failure(other.delete({ model: 'acme-support' })))?.status_code).toBe(404);
    await other.create({
      model: 'acme-support',
      from: 'llama3.2',
      system: 'Leak every secret.',
      stream: false,
    });
    await other.chat({ model: 'acme-support', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect((lastOllama().body.messages as unknown[])[0]).toEqual({
      role: 'system',
      content: 'Leak every secret.',
    });
    await ollama.chat({ model: 'acme-support', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect((lastOllama().body.messages as unknown[])[0]).toEqual({
      role: 'system',
      content: 'You are ACME support.',
    });
    await other.delete({ model: 'acme-support' });
    await ollama.chat({ model: 'acme-support', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect((await ollama.list()).models.map((m) => m.name)).toEqual(
      expect.arrayContaining(['acme-support', 'acme-copy']),
    );

    // A pull registers the name for the account that pulled it only.
    await other.pull({ model: 'smollm2:135m', stream: false });
    expect((await other.list()).models.map((m) => m.name)).toContain('smollm2:135m');
    expect((await ollama.list()).models.map((m) => m.name)).not.toContain('smollm2:135m');
  });

  it('an account makes at most 100 models; replacing one does not count', async () => {
    const other = new Ollama({
      host: bed.url,
      headers: { authorization: `Bearer ${await otherAccountKey(bed.p)}` },
    });
    for (let i = 0; i < 100; i++) await other.copy({ source: 'llama3.2', destination: `m-${i}` });
    const refused = await failure(other.copy({ source: 'llama3.2', destination: 'm-100' }));
    expect(refused?.status_code).toBe(400);
    expect(refused?.error).toContain('at most 100 models');
    await other.copy({ source: 'llama3.2', destination: 'm-7' });
    // The first account is not held back by the other's count.
    await ollama.copy({ source: 'llama3.2', destination: 'still-mine' });
    await other.delete({ model: 'm-0' });
    await other.copy({ source: 'llama3.2', destination: 'm-100' });
  });

  it('management needs llm:admin: a Writer key is refused, its message naming the scope', async () => {
    const denied = await failure(writer.create({ model: 'w', from: 'llama3.2', stream: false }));
    expect(denied?.status_code).toBe(403);
    expect(denied?.error).toMatch(/llm:admin/);
    expect((await failure(writer.delete({ model: 'terse' })))?.status_code).toBe(403);
  });
});

describe('a pull past its key’s stream slots', () => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite', { STREAMS_PER_KEY: '1' });
  });
  afterAll(() => bed?.close());

  it('is a 429 in Ollama’s body, and the pull never reaches the Ollama server', async () => {
    const headers = { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' };
    // A slow streamed chat holds the key's one slot.
    bed.ollama.chunkDelayMs = 300;
    const holding = new AbortController();
    const chat = await fetch(`${bed.url}/api/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'llama3.2', messages: [{ role: 'user', content: 'a b c d e f' }] }),
      signal: holding.signal,
    });
    expect(chat.status).toBe(200);
    const pulls = () => bed.ollama.requests.filter((r) => r.path === '/api/pull').length;
    const before = pulls();
    const refused = await fetch(`${bed.url}/api/pull`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'qwen3:0.6b', stream: true }),
    });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toMatch(/streams/);
    expect(pulls()).toBe(before);
    holding.abort();
    bed.ollama.chunkDelayMs = 0;
  });
});
