import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

const BUILTIN = 'builtin/hashed-ngrams';

/**
 * An OpenAI-compatible embeddings upstream (its real wire format) that answers the first `answering`
 * calls and then fails with a 500, so the gateway falls back to the built-in embedding model.
 */
function startUpstream() {
  const state = { answering: 0, calls: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.calls++;
      res.setHeader('content-type', 'application/json');
      if (state.calls > state.answering) {
        res.writeHead(500);
        res.end(
          JSON.stringify({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } }),
        );
        return;
      }
      const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] };
      res.end(
        JSON.stringify({
          object: 'list',
          model: 'remote-embed',
          data: input.map((_, index) => ({ object: 'embedding', index, embedding: [1, 0, 0, index % 2] })),
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        }),
      );
    });
  });
  return { server, state };
}

describe.each(await testDialects())('embeddings answered by a fallback model on %s', (dialect) => {
  let p: TestPlatform;
  const upstream = startUpstream();

  beforeAll(async () => {
    await new Promise<void>((r) => upstream.server.listen(0, '127.0.0.1', r));
    const { port } = upstream.server.address() as AddressInfo;
    p = await createTestPlatform({
      dialect,
      env: {
        LLM_MODELS: JSON.stringify([
          {
            provider: 'openai',
            baseUrl: `http://127.0.0.1:${port}/v1`,
            timeoutMs: 5_000,
            name: 'remote-embed',
            kind: 'embedding',
            fallbacks: [BUILTIN],
          },
        ]),
      },
    });
  }, 30_000);
  afterAll(async () => {
    await p?.close();
    upstream.server.closeAllConnections();
    await new Promise((r) => upstream.server.close(r));
  });

  it('stores the vectors under the model that answered, and the topic is searched in its space', async () => {
    upstream.state.answering = 0;
    const doc = await loaded(p, {
      source: 'text',
      content: 'Lighthouses guide ships past the rocks at night.',
      topic: 'coast',
    });
    const done = await processed(p, doc.id, { embeddingModel: 'remote-embed' });
    expect(done).toMatchObject({ status: 'indexed', error: null, embeddingModel: BUILTIN });
    const chunks = (await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks` })).json() as {
      data: Array<{ embeddingModel: string | null }>;
    };
    expect(chunks.data.length).toBeGreaterThan(0);
    expect(chunks.data.every((c) => c.embeddingModel === BUILTIN)).toBe(true);
    const found = await query(p, { query: 'lighthouse ships', topics: ['coast'], mode: 'vector' });
    expect(found.statusCode, found.body).toBe(200);
    expect((found.json() as { results: unknown[] }).results.length).toBeGreaterThan(0);
  });

  it('fails a document whose batches were answered by two models rather than mix their spaces', async () => {
    upstream.state.calls = 0;
    upstream.state.answering = 1;
    const long = Array.from(
      { length: 600 },
      (_, i) => `Line ${i} of the harbour log, kept by the night watch.`,
    ).join('\n\n');
    const doc = await loaded(p, { source: 'text', content: long, topic: 'harbour' });
    const done = await processed(p, doc.id, {
      embeddingModel: 'remote-embed',
      chunkSize: 50,
      chunkOverlap: 0,
    });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/two models \('remote-embed', then 'builtin\/hashed-ngrams'\)/);
  });
});
