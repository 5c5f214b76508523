import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextUtcMidnight } from '../../src/core/clock.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { TestClock } from '../helpers/clock.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable, testDialects } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';

const dialects = await testDialects();
const redisUp = await redisAvailable();

describe.each(dialects)('daily quotas on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      clock: new TestClock('2026-03-14T23:59:30.000Z'),
      modules: [authModule, healthModule, probeModule],
    });
  });
  afterAll(async () => {
    await p.close();
  });

  it('defaults: 5,000 for development and 50,000 for production keys, shown on the key', async () => {
    const dev = await p.createKey({ name: 'dev', type: 'development', services: ['core'], role: 'Admin' });
    const prod = await p.createKey({ name: 'prod', type: 'production', services: ['core'], role: 'Admin' });
    const view = async (id: string) => (await p.request({ method: 'GET', url: `/v1/api-keys/${id}` })).json();
    expect((await view(dev.id)).dailyQuota).toBe(5_000);
    expect((await view(prod.id)).dailyQuota).toBe(50_000);
    const res = await p.request({ method: 'GET', url: `/v1/api-keys/${dev.id}`, key: dev.key });
    expect(res.headers['x-ratelimit-limit']).toBe('5000');
    expect(res.headers['x-ratelimit-remaining']).toBe('4999');
    const byProd = await p.request({ method: 'GET', url: `/v1/api-keys/${dev.id}`, key: prod.key });
    expect(byProd.headers['x-ratelimit-limit']).toBe('50000');
  });

  it('headers on authenticated errors too, with Reset at the next UTC midnight', async () => {
    const k = await p.createKey({ name: 'h', type: 'development', services: ['core'], role: 'Admin' });
    const midnight = String(Date.parse('2026-03-15T00:00:00.000Z') / 1000);
    const missing = await p.request({ method: 'GET', url: '/v1/api-keys/key_missing', key: k.key });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-ratelimit-limit']).toBe('5000');
    expect(missing.headers['x-ratelimit-reset']).toBe(midnight);
    const invalid = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      key: k.key,
      payload: { name: '' },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers['x-ratelimit-remaining']).toBe('4998');
    expect(invalid.headers['x-ratelimit-reset']).toBe(midnight);
  });

  it('a refused request (wrong service, missing scope, address) carries the headers but is not counted', async () => {
    const k = await p.createKey({
      name: 'narrow',
      type: 'development',
      services: ['core'],
      role: 'Reader',
      allowedIps: ['10.0.0.0/8'],
    });
    const get = (url: string, remoteAddress = '10.0.0.1') =>
      p.request({ method: 'GET', url, key: k.key, remoteAddress });
    const ok = await get('/v1/usage');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-ratelimit-remaining']).toBe('4999');
    // Wrong role for key management, wrong service, address outside allowedIps.
    const refused = [
      await get(`/v1/api-keys/${k.id}`),
      await get('/probe/commerce'),
      await get('/v1/usage', '192.0.2.1'),
    ];
    for (const res of refused) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
      expect(res.headers['x-ratelimit-limit']).toBe('5000');
      expect(res.headers['x-ratelimit-remaining']).toBe('4999');
      expect(res.headers['x-ratelimit-reset']).toBe(String(Date.parse('2026-03-15T00:00:00.000Z') / 1000));
    }
    const again = await get('/v1/usage');
    expect(again.headers['x-ratelimit-remaining']).toBe('4998');
  });

  it('per-key quota, changed by PATCH at once, and Retry-After counts down to UTC midnight', async () => {
    const k = await p.createKey({
      name: 'small',
      type: 'production',
      services: ['commerce'],
      role: 'Reader',
      dailyQuota: 2,
    });
    const hit = () => p.request({ method: 'GET', url: '/probe/commerce', key: k.key });
    expect((await hit()).statusCode).toBe(200);
    expect((await hit()).headers['x-ratelimit-remaining']).toBe('0');
    const refused = await hit();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: true, code: 'RATE_LIMIT_EXCEEDED' });
    const secondsToMidnight = nextUtcMidnight(p.clock.now()) - Math.floor(p.clock.now().getTime() / 1000);
    expect(Number(refused.headers['retry-after'])).toBe(secondsToMidnight);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-limit']).toBe('2');

    // Raising the quota applies to the very next request.
    const patched = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${k.id}`,
      payload: { dailyQuota: 5 },
    });
    expect(patched.json().dailyQuota).toBe(5);
    const raised = await hit();
    expect(raised.statusCode).toBe(200);
    expect(raised.headers['x-ratelimit-limit']).toBe('5');
    // Back to the type default with null.
    const reset = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${k.id}`,
      payload: { dailyQuota: null },
    });
    expect(reset.json().dailyQuota).toBe(50_000);
    expect((await hit()).headers['x-ratelimit-limit']).toBe('50000');
    await p.request({ method: 'PATCH', url: `/v1/api-keys/${k.id}`, payload: { dailyQuota: 1 } });
    expect((await hit()).statusCode).toBe(429);

    // One second before midnight still refused; at midnight a fresh day.
    p.clock.set('2026-03-14T23:59:59.500Z');
    expect((await hit()).statusCode).toBe(429);
    p.clock.set('2026-03-15T00:00:00.000Z');
    const nextDay = await hit();
    expect(nextDay.statusCode).toBe(200);
    expect(nextDay.headers['x-ratelimit-remaining']).toBe('0');
    expect(nextDay.headers['x-ratelimit-reset']).toBe(String(Date.parse('2026-03-16T00:00:00.000Z') / 1000));
    p.clock.set('2026-03-14T23:59:30.000Z');
  });
});

describe('QUOTA_DAILY_* settings', () => {
  it('override the defaults for keys without their own quota', async () => {
    const p = await createTestPlatform({
      dialect: 'sqlite',
      env: { QUOTA_DAILY_DEVELOPMENT: '3', QUOTA_DAILY_PRODUCTION: '11' },
    });
    try {
      const dev = await p.createKey({ name: 'dev', type: 'development', services: ['core'], role: 'Admin' });
      const own = await p.createKey({
        name: 'own',
        type: 'development',
        services: ['core'],
        role: 'Admin',
        dailyQuota: 9,
      });
      const list = (await p.request({ method: 'GET', url: '/v1/api-keys?sort=name' })).json().data;
      const quotas = Object.fromEntries(
        list.map((k: { name: string; dailyQuota: number }) => [k.name, k.dailyQuota]),
      );
      expect(quotas).toEqual({ bootstrap: 11, dev: 3, own: 9 });
      const codes = [];
      for (let i = 0; i < 4; i++)
        codes.push(
          (await p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key: dev.key })).statusCode,
        );
      expect(codes).toEqual([200, 200, 200, 429]);
      expect(
        (await p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key: own.key })).headers,
      ).toMatchObject({ 'x-ratelimit-limit': '9', 'x-ratelimit-remaining': '8' });
    } finally {
      await p.close();
    }
  });
});

const stores = dialects.flatMap((dialect) => [
  { dialect, redis: false },
  ...(redisUp ? [{ dialect, redis: true }] : []),
]);

describe.each(stores)(
  'quota exactness with a key and its tokens on $dialect (redis: $redis)',
  ({ dialect, redis }) => {
    let p: TestPlatform;
    beforeAll(async () => {
      p = await createTestPlatform({ dialect, redis, modules: [authModule, healthModule, probeModule] });
    });
    afterAll(async () => {
      await p.close();
    });

    it('N allowed out of 3N concurrent requests split between the key and two customer tokens', async () => {
      const N = 20;
      const k = await p.createKey({
        name: 'mix',
        type: 'production',
        services: ['commerce'],
        role: 'Reader',
        dailyQuota: N + 2,
      });
      const tokens = [];
      for (const customerId of ['a', 'b']) {
        const res = await p.request({
          method: 'POST',
          url: '/v1/auth/tokens',
          key: k.key,
          payload: { customerId, scopes: ['commerce:read'] },
        });
        tokens.push(res.json().token as string);
      }
      const credentials = [k.key, ...tokens];
      const results = await Promise.all(
        Array.from({ length: 3 * N }, (_, i) =>
          p.request({ method: 'GET', url: '/probe/commerce', key: credentials[i % 3] }),
        ),
      );
      const codes = results.map((r) => r.statusCode);
      expect(codes.filter((c) => c === 200)).toHaveLength(N);
      expect(codes.filter((c) => c === 429)).toHaveLength(2 * N);
      const remaining = results
        .filter((r) => r.statusCode === 200)
        .map((r) => r.headers['x-ratelimit-remaining']);
      expect(new Set(remaining).size).toBe(N);
    });
  },
);
