import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** `GET /` answers as an Ollama server's root does: tools check it before they connect. */
describe("Ollama's root", () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(() => p.close());

  it('says "Ollama is running" as text, with no key, and HEAD answers too', async () => {
    const res = await p.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('Ollama is running');
    const head = await p.app.inject({ method: 'HEAD', url: '/' });
    expect(head.statusCode).toBe(200);
    // Other verbs on the root are refused in the platform's error body, naming the allowed ones.
    const post = await p.app.inject({ method: 'POST', url: '/', payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toContain('GET');
  });

  it('answers the same on a listening server; the API behind it still needs a key', async () => {
    const address = await p.app.listen({ port: 0, host: '127.0.0.1' });
    const ollama = new Ollama({ host: address });
    const text = await (await fetch(`${address}/`)).text();
    expect(text).toBe('Ollama is running');
    // The client's own calls still need a key.
    await expect(ollama.list()).rejects.toThrow();
  });
});
