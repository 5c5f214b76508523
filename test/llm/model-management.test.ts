import { createHash } from 'node:crypto';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    bed = await startLlmTestbed(dialect);
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

  it('management needs llm:admin: a Writer key is refused, its message naming the scope', async () => {
    const denied = await failure(writer.create({ model: 'w', from: 'llama3.2', stream: false }));
    expect(denied?.status_code).toBe(403);
    expect(denied?.error).toMatch(/llm:admin/);
    expect((await failure(writer.delete({ model: 'terse' })))?.status_code).toBe(403);
  });
});
