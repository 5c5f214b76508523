import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

const cursorOf = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');

describe.each(dialects)('forged cursors and empty path parameters on %s', (dialect) => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await platform.close();
  });

  it('a cursor holding a NUL (in its value, its id or its sort) is a 400 like every other bad cursor', async () => {
    for (const forged of [
      ['name', 'asc', 'a\u0000b', 'tag_1'],
      ['name', 'asc', 'a', 'tag_\u0000'],
      ['name\u0000', 'asc', 'a', 'tag_1'],
    ]) {
      const res = await platform.request({ method: 'GET', url: `/api/v1/tags?cursor=${cursorOf(forged)}` });
      expect(res.statusCode, JSON.stringify(forged)).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: 'cursor', message: 'is not a valid cursor' }] },
      });
    }
    // The same route with a genuine cursor still pages.
    const ok = await platform.request({
      method: 'GET',
      url: `/api/v1/tags?cursor=${cursorOf(['name', 'asc', 'a', 'tag_1'])}`,
    });
    expect(ok.statusCode).toBe(200);
  });

  it('an empty path parameter is a 404 on every route, never the collection; a trailing slash elsewhere is the same route', async () => {
    for (const [method, url] of [
      ['GET', '/v1/api-keys/'],
      ['DELETE', '/v1/api-keys/'],
      ['GET', '/api/v1/workflows/'],
      ['POST', '/api/v1/workflows//activate'],
      ['GET', '/v1/api-keys//'],
    ] as const) {
      const res = await platform.request({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({ error: true, code: 'ROUTE_NOT_FOUND' });
      expect(res.json().message).toContain('a path parameter is empty');
    }
    expect((await platform.request({ method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);
    expect((await platform.request({ method: 'GET', url: '/health/', key: null })).statusCode).toBe(200);
  });
});
