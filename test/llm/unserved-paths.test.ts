import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmTestbed, startLlmTestbed } from './support.js';

/**
 * Paths of Ollama's and OpenAI's APIs the gateway does not serve answer 404 in the product's own error
 * body, so the official clients show the message; the platform's own unknown paths keep its body.
 */
describe("unserved paths of the products' APIs", () => {
  let bed: LlmTestbed;
  let openai: OpenAI;
  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    openai = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it("OpenAI's unserved resources and unknown sub-paths of files: the client's NotFoundError, with the message", async () => {
    const models = await openai.images
      .generate({ model: 'dall-e-3', prompt: 'a cat' })
      .catch((e: unknown) => e);
    expect(models).toBeInstanceOf(OpenAI.NotFoundError);
    expect((models as InstanceType<typeof OpenAI.NotFoundError>).message).toContain(
      'No route POST /v1/images/generations',
    );
    const res = await fetch(`${bed.url}/v1/files/file_x/nothing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { message: string; type: string }; code: string };
    expect(body.error.message).toContain('/v1/files/file_x/nothing');
    expect(body.code).toBe('ROUTE_NOT_FOUND');
  });

  it("a body refused on an unserved OpenAI path (before any route) answers in OpenAI's body too", async () => {
    // Malformed JSON, and bytes that are not UTF-8.
    for (const body of ['{', Buffer.from([0xed, 0xa0, 0x80, 0x7b, 0x7d])]) {
      const res = await fetch(`${bed.url}/v1/batches/a/b/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { error: { message: string; type: string } };
      expect(typeof answer.error.message, JSON.stringify(answer)).toBe('string');
    }
  });

  it("Ollama's management paths under a method they do not serve answer in Ollama's body", async () => {
    const res = await fetch(`${bed.url}/api/pull`, {
      headers: { authorization: `Bearer ${bed.p.adminKey}` },
    });
    expect(res.status).toBe(405);
    const body = (await res.json()) as { error: unknown };
    expect(typeof body.error).toBe('string');
    expect(body.error).toContain('/api/pull');
  });

  it("the platform's own unknown paths keep the platform's body", async () => {
    for (const url of ['/v1/nothing-here', '/api/nothing-here', '/v1/filesystem']) {
      const res = await fetch(`${bed.url}${url}`, { headers: { authorization: `Bearer ${bed.p.adminKey}` } });
      expect(res.status, url).toBe(404);
      expect(await res.json(), url).toMatchObject({ error: true, code: 'ROUTE_NOT_FOUND' });
    }
  });
});
