import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** The shared 401/403/429 suite on the document routes. */
describe('documents authentication and authorization', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(() => p?.close());

  authSuite(() => p, {
    method: 'POST',
    url: '/api/documents/load',
    service: 'docproc',
    payload: { source: 'text', content: 'Auth suite text.' },
  });
  authSuite(() => p, { method: 'GET', url: '/api/documents', service: 'docproc' });
  authSuite(() => p, { method: 'GET', url: '/api/documents/doc_missing/chunks', service: 'docproc' });
  authSuite(() => p, {
    method: 'POST',
    url: '/api/documents/doc_missing/process',
    service: 'docproc',
    payload: {},
  });
  authSuite(() => p, {
    method: 'DELETE',
    url: '/api/documents/doc_missing',
    service: 'docproc',
    weakRole: 'Writer',
  });
  authSuite(() => p, { method: 'GET', url: '/api/knowledge/topics', service: 'docproc' });

  it('customer tokens are refused on the knowledge routes', async () => {
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId: 'c-1', scopes: ['commerce:read'] },
    });
    const token = (minted.json() as { token: string }).token;
    const res = await p.request({
      method: 'POST',
      url: '/api/knowledge/query',
      payload: { query: 'x' },
      key: token,
    });
    expect(res.statusCode).toBe(403);
    expect((await p.request({ method: 'GET', url: '/api/documents', key: token })).statusCode).toBe(403);
  });
});
