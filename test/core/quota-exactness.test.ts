import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextUtcMidnight } from '../../src/core/clock.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable, testDialects } from '../helpers/services.js';

const dialects = await testDialects();
const redisUp = await redisAvailable();
const stores: Array<{ dialect: (typeof dialects)[number]; redis: boolean }> = dialects.flatMap((dialect) => [
  { dialect, redis: false },
  ...(redisUp ? [{ dialect, redis: true }] : []),
]);

describe.each(stores)('daily quota on $dialect (redis: $redis)', ({ dialect, redis }) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, redis, env: { QUOTA_DAILY_DEVELOPMENT: '7' } });
  });
  afterAll(async () => {
    await p.close();
  });

  it('with a quota of N and 3N concurrent requests, exactly N succeed', async () => {
    const N = 20;
    const { key } = await p.createKey({
      name: 'n',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      dailyQuota: N,
    });
    const results = await Promise.all(
      Array.from({ length: 3 * N }, () => p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key })),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(N);
    expect(codes.filter((c) => c === 429)).toHaveLength(2 * N);
    const remaining = results
      .filter((r) => r.statusCode === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']));
    expect(new Set(remaining).size).toBe(N);
    expect(Math.min(...remaining)).toBe(0);
  });

  it('headers on every authenticated response; the global default applies; resets at UTC midnight', async () => {
    const { key } = await p.createKey({
      name: 'default',
      type: 'development',
      services: ['core'],
      role: 'Admin',
    });
    const view = (await p.request({ method: 'GET', url: '/v1/api-keys?name=default' })).json().data[0];
    expect(view.dailyQuota).toBe(7);
    for (let i = 0; i < 7; i++) {
      const res = await p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('7');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(6 - i));
      expect(res.headers['x-ratelimit-reset']).toBe(String(nextUtcMidnight(p.clock.now())));
    }
    const refused = await p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('RATE_LIMIT_EXCEEDED');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    p.clock.advance(retryAfter + 1);
    const nextDay = await p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key });
    expect(nextDay.statusCode).toBe(200);
    expect(nextDay.headers['x-ratelimit-remaining']).toBe('6');
  });

  it('exactness holds against a real listening server too', async () => {
    const N = 10;
    const { key } = await p.createKey({
      name: 'tcp',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      dailyQuota: N,
    });
    const address = await p.app.listen({ port: 0, host: '127.0.0.1' });
    const statuses = await Promise.all(
      Array.from({ length: 3 * N }, () =>
        fetch(`${address}/v1/api-keys?limit=1`, { headers: { authorization: `Bearer ${key}` } }).then(
          async (r) => {
            await r.arrayBuffer();
            return r.status;
          },
        ),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(N);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * N);
  });
});
