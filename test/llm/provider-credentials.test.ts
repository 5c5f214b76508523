import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';
import { createCredential } from '../workflows/support.js';

/** A provider key kept as the owner account's encrypted credential (`apiKeyCredential`). */
describe('provider keys from encrypted credentials', () => {
  let p: TestPlatform;
  let upstream: FakeLlmServer;
  const chat = () =>
    p.request({
      method: 'POST',
      url: '/v1/chat/completions',
      payload: { model: 'vault-model', messages: [{ role: 'user', content: 'hi' }] },
    });

  beforeAll(async () => {
    upstream = await startFakeOpenAi({ apiKey: 'sk-from-the-vault' });
    p = await createTestPlatform({
      dialect: 'sqlite',
      env: {
        LLM_MODELS: JSON.stringify([
          {
            name: 'vault-model',
            provider: 'openai',
            baseUrl: upstream.url,
            upstreamModel: 'gpt-4o-mini',
            apiKeyCredential: 'openai-upstream',
            timeoutMs: 2000,
          },
        ]),
      },
    });
  });
  afterAll(async () => {
    await p?.close();
    await upstream?.close();
  });

  it('without the credential the model cannot answer: 502, nothing sent upstream', async () => {
    const res = await chat();
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_ERROR',
      error: { message: expect.stringMatching(/credential/) },
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it('once the owner stores it, the upstream gets it as a bearer token (and the client never sees it)', async () => {
    await createCredential(p, 'openai-upstream', 'httpBearerAuth', { token: 'sk-from-the-vault' });
    // The resolver re-reads a credential at most once a minute: move past the cached miss.
    p.clock.advance(61);
    const res = await chat();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain('sk-from-the-vault');
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-the-vault');
  });
});
