import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

const chat = {
  model: 'builtin/extractive',
  stream: false,
  messages: [{ role: 'user', content: 'Hi there. Hello?' }],
};

/** The shared 401/403/429 suite on the gateway's routes, each in its surface's error body. */
describe('gateway authentication and authorization', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(() => p?.close());

  authSuite(() => p, {
    method: 'POST',
    url: '/api/chat',
    service: 'llm',
    payload: chat,
    errorBody: 'ollama',
  });
  authSuite(() => p, {
    method: 'POST',
    url: '/api/embed',
    service: 'llm',
    payload: { model: 'builtin/hashed-ngrams', input: 'x' },
    errorBody: 'ollama',
  });
  authSuite(() => p, { method: 'GET', url: '/api/tags', service: 'llm', errorBody: 'ollama' });
  authSuite(() => p, {
    method: 'POST',
    url: '/v1/chat/completions',
    service: 'llm',
    payload: { model: 'builtin/extractive', messages: chat.messages },
    errorBody: 'openai',
  });
  authSuite(() => p, { method: 'GET', url: '/v1/models', service: 'llm', errorBody: 'openai' });
  authSuite(() => p, { method: 'GET', url: '/v1/llm/requests', service: 'llm' });

  it('customer tokens are refused on the model routes', async () => {
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId: 'c-1', scopes: ['commerce:read'] },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const token = (minted.json() as { token: string }).token;
    const res = await p.request({ method: 'POST', url: '/api/chat', payload: chat, key: token });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: expect.stringMatching(/Customer tokens/), code: 'FORBIDDEN' });
  });
});
