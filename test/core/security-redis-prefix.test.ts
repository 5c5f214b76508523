import { afterEach, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform, testRedis } from '../helpers/platform.js';
import { redisAvailable, uniqueName } from '../helpers/services.js';

const redisUp = await redisAvailable();
const backends = [false, ...(redisUp ? [true] : [])];

let open: TestPlatform[] = [];
afterEach(async () => {
  await Promise.all(open.map((p) => p.close()));
  open = [];
});

async function platform(env: Record<string, string>, redis: boolean): Promise<TestPlatform> {
  const p = await createTestPlatform({ dialect: 'sqlite', env, redis });
  open.push(p);
  return p;
}

// Redis counters outlive a run: every test takes a fresh client address.
const octet = () => Math.floor(Math.random() * 254) + 1;
const freshIp = () => `198.18.${octet()}.${octet()}`;

/** Audit item 20: the workflow API's per-endpoint window, and REDIS_PREFIX. */
describe.each(backends)('limits (redis counters: %s)', (redis) => {
  it('the workflow API applies RATE_LIMIT_PER_ENDPOINT: 5 of 12 calls pass', async () => {
    const p = await platform(
      { RATE_LIMIT_PER_ENDPOINT: '5', ...(redis ? { REDIS_PREFIX: `${uniqueName('t')}:` } : {}) },
      redis,
    );
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await p.request({ method: 'GET', url: '/api/v1/workflows', remoteAddress: freshIp() });
      codes.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(res.json().code).toBe('RATE_LIMIT_EXCEEDED');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    expect(codes.filter((c) => c === 200)).toHaveLength(5);
    expect(codes.filter((c) => c === 429)).toHaveLength(7);
    // Per endpoint: another endpoint of the same key is a window of its own.
    expect((await p.request({ method: 'GET', url: '/api/v1/executions' })).statusCode).toBe(200);
  });
});

describe.runIf(redisUp)('REDIS_PREFIX', () => {
  it('two platforms sharing one Redis with different prefixes do not share limits', async () => {
    const prefixA = `${uniqueName('a')}:`;
    const env = { RATE_LIMIT_PER_IP: '3' };
    const a = await platform({ ...env, REDIS_PREFIX: prefixA }, true);
    const b = await platform({ ...env, REDIS_PREFIX: `${uniqueName('b')}:` }, true);
    const sameAsA = await platform({ ...env, REDIS_PREFIX: prefixA }, true);
    const ip = freshIp();
    const call = (p: TestPlatform) =>
      p.request({ method: 'GET', url: '/v1/api-keys?limit=1', remoteAddress: ip });
    for (let i = 0; i < 3; i++) expect((await call(a)).statusCode).toBe(200);
    expect((await call(a)).statusCode).toBe(429);
    expect((await call(b)).statusCode).toBe(200);
    // Control: the same prefix is the same deployment, and shares the counters.
    expect((await call(sameAsA)).statusCode).toBe(429);

    const client = testRedis();
    try {
      const keys = await client.keys(`${prefixA}*`);
      expect(keys.some((k) => k.includes(ip))).toBe(true);
      expect(await client.keys(`platform:*${ip}*`)).toEqual([]);
      // The key-cache invalidation channel is prefixed too.
      const channels = await client.pubsub('CHANNELS', `${prefixA}*`);
      expect(channels).toContain(`${prefixA}keys:invalidate`);
    } finally {
      client.disconnect();
    }
  });
});
