import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/core/db/database.js';
import { VERSION } from '../../src/version.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

describe.each(dialects)('shared conventions on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await p.close();
  });

  it('unknown routes are 404 in the error shape, with the request id', async () => {
    const res = await p.request({
      method: 'GET',
      url: '/v1/nothing-here',
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: true, code: 'ROUTE_NOT_FOUND', requestId: 'trace-123' });
    expect(res.headers['x-request-id']).toBe('trace-123');
  });

  it('a malformed X-Request-Id is replaced by a generated one', async () => {
    const res = await p.request({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('malformed JSON → 400, too large → 413, wrong content type → 415, wrong types → 400', async () => {
    const malformed = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe('VALIDATION_ERROR');
    const large = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'x'.repeat(4096), type: 'development', services: ['core'], role: 'Reader' },
    });
    expect(large.statusCode).toBe(413);
    expect(large.json().code).toBe('PAYLOAD_TOO_LARGE');
    for (const type of ['text/plain', 'application/xml']) {
      const res = await p.request({
        method: 'POST',
        url: '/v1/api-keys',
        payload: '<a/>',
        headers: { 'content-type': type },
      });
      expect(res.statusCode).toBe(415);
      expect(res.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    const typed = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'n', type: 'development', services: ['core'], role: 'Reader', dailyQuota: '5' },
    });
    expect(typed.statusCode).toBe(400);
    expect(typed.json().details.fields).toEqual([{ field: 'body.dailyQuota', message: 'must be integer' }]);
  });

  it('IP rules: IPv4 CIDR, IPv6 and bare addresses; X-Forwarded-For ignored without TRUST_PROXY', async () => {
    const v4 = await p.createKey({
      name: 'v4',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['203.0.113.0/24'],
    });
    const v6 = await p.createKey({
      name: 'v6',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['2001:db8::/32', '198.51.100.7'],
    });
    const call = (key: string, remoteAddress: string, headers: Record<string, string> = {}) =>
      p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key, remoteAddress, headers });
    expect((await call(v4.key, '203.0.113.9')).statusCode).toBe(200);
    expect((await call(v4.key, '::ffff:203.0.113.9')).statusCode).toBe(200);
    const outside = await call(v4.key, '192.0.2.1');
    expect(outside.statusCode).toBe(403);
    expect(outside.json().code).toBe('FORBIDDEN');
    expect((await call(v6.key, '2001:db8::1')).statusCode).toBe(200);
    expect((await call(v6.key, '198.51.100.7')).statusCode).toBe(200);
    expect((await call(v6.key, '2001:db9::1')).statusCode).toBe(403);
    expect((await call(v4.key, '192.0.2.1', { 'x-forwarded-for': '203.0.113.9' })).statusCode).toBe(403);
  });

  it('/health reports the database and the version', async () => {
    const res = await p.request({ method: 'GET', url: '/health', key: null });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', version: VERSION, databaseStatus: 'ok' });
    expect(Date.parse(body.timestamp)).not.toBeNaN();
  });

  it('/openapi.json is OpenAPI 3.1 with schemas for every route; /reference is HTML', async () => {
    const doc = (await p.request({ method: 'GET', url: '/openapi.json', key: null })).json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    for (const path of [
      '/v1/api-keys',
      '/v1/api-keys/{id}',
      '/v1/api-keys/{id}/rotate',
      '/v1/auth/tokens',
      '/v1/usage',
      '/health',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
      for (const op of Object.values(doc.paths[path]) as Array<{ responses: Record<string, unknown> }>) {
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      }
    }
    expect(doc.paths['/v1/api-keys'].post.requestBody).toBeDefined();
    const ref = await p.request({ method: 'GET', url: '/reference/', key: null });
    expect(ref.statusCode).toBe(200);
    expect(ref.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('trusted proxies and health when the database is gone', () => {
  it('TRUST_PROXY=true believes X-Forwarded-For', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', env: { TRUST_PROXY: 'true' } });
    try {
      const k = await p.createKey({
        name: 'v4',
        type: 'development',
        services: ['core'],
        role: 'Admin',
        allowedIps: ['203.0.113.0/24'],
      });
      const res = await p.request({
        method: 'GET',
        url: '/v1/api-keys?limit=1',
        key: k.key,
        remoteAddress: '10.0.0.1',
        headers: { 'x-forwarded-for': '203.0.113.9' },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await p.close();
    }
  });

  it('503 degraded when the database does not answer', async () => {
    const config = parseConfig({ DATA_DIR: ':memory:', LOG_LEVEL: 'silent' });
    const database = await openDatabase({ databaseUrl: '', dataDir: ':memory:' });
    const { app } = await buildApp({ config, database, logger: false });
    await database.close();
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'degraded', databaseStatus: 'error' });
    await app.close();
  });
});
