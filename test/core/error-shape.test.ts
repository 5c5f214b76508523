import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';

const dialects = await testDialects();

function expectErrorShape(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  code: string,
) {
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error', 'message', 'requestId']);
  expect(body.error).toBe(true);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.requestId).toBe(res.headers['x-request-id']);
}

describe.each(dialects)('error bodies and request ids on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      env: { BODY_LIMIT_BYTES: '2048' },
      modules: [authModule, healthModule, probeModule],
    });
  });
  afterAll(async () => {
    await p.close();
  });

  it('a body failing its schema lists every offending field at once', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { type: 'staging', role: 5, services: 'core', dailyQuota: 0, isOwner: true },
    });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res, 'VALIDATION_ERROR');
    const fields = (res.json().details.fields as Array<{ field: string }>).map((f) => f.field);
    for (const field of [
      'body.name',
      'body.type',
      'body.role',
      'body.services',
      'body.dailyQuota',
      'body.isOwner',
    ])
      expect(fields).toContain(field);
  });

  it('query strings are validated too, naming the parameter', async () => {
    const res = await p.request({ method: 'GET', url: '/v1/api-keys?limit=abc&sort=secret' });
    expect(res.statusCode).toBe(400);
    expectErrorShape(res, 'VALIDATION_ERROR');
    expect(res.json().details.fields.map((f: { field: string }) => f.field)).toContain('querystring.limit');
  });

  it('a value outside a set of literals is one entry naming the allowed values', async () => {
    const res = await p.request({ method: 'GET', url: '/v1/api-keys?order=sideways' });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.fields).toEqual([
      { field: 'querystring.order', message: 'must be one of: asc, desc' },
    ]);
  });

  it('wrong JSON types are refused, not coerced', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 7, type: 'development', services: ['core'], role: 'Reader', expiresAt: 1 },
    });
    expect(res.statusCode).toBe(400);
    const fields = res.json().details.fields.map((f: { field: string }) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['body.name', 'body.expiresAt']));
    const quota = await p.request({
      method: 'PATCH',
      url: '/v1/api-keys/key_x',
      payload: { dailyQuota: '5' },
    });
    expect(quota.statusCode).toBe(400);
  });

  it('an empty JSON body is no body, and a JSON body with a charset', async () => {
    const send = (method: 'POST' | 'DELETE', url: string, payload: string, type = 'application/json') =>
      p.request({ method, url, payload, headers: { 'content-type': type } });
    const empty = await send('POST', '/v1/api-keys', '');
    // Validated as {}: the 400 names the missing fields.
    expect(empty.statusCode).toBe(400);
    expectErrorShape(empty, 'VALIDATION_ERROR');
    const missing = empty.json().details.fields.map((f: { field: string }) => f.field);
    expect(missing).toEqual(expect.arrayContaining(['body.name', 'body.type']));
    const { id } = await p.createKey({
      name: 'del',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    expect((await send('DELETE', `/v1/api-keys/${id}`, '')).statusCode).toBe(204);
    const proto = await send('POST', '/v1/api-keys', '{"__proto__":{"admin":true},"name":"x"}');
    expect(proto.statusCode).toBe(400);
    expectErrorShape(proto, 'VALIDATION_ERROR');
    const body = JSON.stringify({ name: 'cs', type: 'development', services: ['core'], role: 'Reader' });
    const charset = await send('POST', '/v1/api-keys', body, 'application/json; charset=utf-8');
    expect(charset.statusCode).toBe(201);
  });

  it('a known path with another method → 405 naming the allowed ones in Allow; an unknown path → 404', async () => {
    const put = await p.request({ method: 'PUT', url: '/v1/api-keys' });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, POST');
    expect(put.json()).toMatchObject({
      code: 'METHOD_NOT_ALLOWED',
      details: { allowed: ['GET', 'HEAD', 'POST'] },
    });
    const onId = await p.request({ method: 'POST', url: '/v1/api-keys/key_x/' });
    expect(onId.statusCode).toBe(405);
    expect(onId.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    expect((await p.request({ method: 'PUT', url: '/v1/nothing-here' })).statusCode).toBe(404);
  });

  it('every error status carries the shape and the request id', async () => {
    const cases: Array<
      [Promise<{ statusCode: number; headers: Record<string, unknown>; json(): unknown }>, number, string]
    > = [
      [p.request({ method: 'GET', url: '/nope' }), 404, 'ROUTE_NOT_FOUND'],
      [p.request({ method: 'PUT', url: '/v1/api-keys' }), 405, 'METHOD_NOT_ALLOWED'],
      [p.request({ method: 'GET', url: '/v1/api-keys', key: null }), 401, 'UNAUTHORIZED'],
      [p.request({ method: 'GET', url: '/v1/api-keys/key_missing' }), 404, 'API_KEY_NOT_FOUND'],
      [
        p.request({
          method: 'POST',
          url: '/v1/api-keys',
          payload: 'x',
          headers: { 'content-type': 'text/csv' },
        }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        p.request({
          method: 'POST',
          url: '/v1/api-keys',
          payload: JSON.stringify({ name: 'y'.repeat(3000) }),
          headers: { 'content-type': 'application/json' },
        }),
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [p.request({ method: 'GET', url: '/probe/boom' }), 500, 'INTERNAL_ERROR'],
      [p.request({ method: 'GET', url: '/probe/public-boom', key: null }), 500, 'INTERNAL_ERROR'],
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      expect(res.statusCode, code).toBe(status);
      expectErrorShape(res, code);
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });

  it('500s hide the message and stack of what was thrown', async () => {
    const res = await p.request({ method: 'GET', url: '/probe/boom' });
    expect(res.json()).toMatchObject({ message: 'Internal server error', details: {} });
    expect(res.body).not.toMatch(/hunter2|postgres:|\/srv\/|stack|at /);
    const pub = await p.request({ method: 'GET', url: '/probe/public-boom', key: null });
    expect(pub.body).not.toContain('secret stack detail');
  });

  it('X-Request-Id: honoured when well-formed, generated and unique otherwise, on successes too', async () => {
    const ok = await p.request({
      method: 'GET',
      url: '/health',
      key: null,
      headers: { 'x-request-id': 'abc.DEF:123-_' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toBe('abc.DEF:123-_');
    const tooLong = await p.request({
      method: 'GET',
      url: '/health',
      key: null,
      headers: { 'x-request-id': 'a'.repeat(129) },
    });
    expect(tooLong.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++)
      ids.add(
        String((await p.request({ method: 'GET', url: '/v1/api-keys?limit=1' })).headers['x-request-id']),
      );
    expect(ids.size).toBe(20);
    const quotaRefusal = await p.request({
      method: 'GET',
      url: '/v1/api-keys?limit=1',
      headers: { 'x-request-id': 'trace-429' },
      key: (
        await p.createKey({
          name: 'q1',
          type: 'development',
          services: ['core'],
          role: 'Admin',
          dailyQuota: 1,
        })
      ).key,
    });
    expect(quotaRefusal.headers['x-request-id']).toBe('trace-429');
  });

  it('401 messages say why without echoing the credential', async () => {
    const bad = `${p.adminKey.slice(0, -1)}${p.adminKey.endsWith('a') ? 'b' : 'a'}`;
    const res = await p.request({ method: 'GET', url: '/v1/api-keys', key: bad });
    expect(res.statusCode).toBe(401);
    expect(res.body).not.toContain(bad);
    expect(res.body).not.toContain(bad.slice(9, 30));
  });
});
