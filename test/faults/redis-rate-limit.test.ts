import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { eventually } from '../workflows/process/processes.js';
import { type PrivateRedis, redisServerAvailable, startPrivateRedis } from './redis-server.js';

/**
 * The rate limiters while Redis does not answer: they fail open to per-process counters (quick
 * answers, the same limits per process, a metric), and count in Redis again once it answers.
 */

const PER_IP = 5;
const runnable = await redisServerAvailable();
let redis: PrivateRedis | undefined;
let platform: TestPlatform | undefined;

afterAll(async () => {
  await platform?.close();
  await redis?.close();
});

describe.skipIf(!runnable)('rate limits while Redis is down', () => {
  it('count per process, answer at once, say so in a metric, and go back to Redis when it answers', async () => {
    redis = await startPrivateRedis();
    const p = await createTestPlatform({
      dialect: 'sqlite',
      env: {
        REDIS_URL: redis.url,
        RATE_LIMIT_PER_IP: String(PER_IP),
        REDIS_COMMAND_TIMEOUT_MS: '500',
        METRICS_ENABLED: 'true',
      },
    });
    platform = p;
    const list = (ip: string) => p.request({ method: 'GET', url: '/api/v1/workflows', remoteAddress: ip });
    const metric = async (name: string): Promise<number> => {
      // From an address of its own: /metrics counts against the per-IP limit too.
      const res = await p.request({
        method: 'GET',
        url: '/metrics',
        remoteAddress: `10.9.${Date.now() % 250}.1`,
      });
      expect(res.statusCode).toBe(200);
      const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
      return Number(line?.split(' ')[1] ?? Number.NaN);
    };

    // Redis up: counted there (the key lands in Redis).
    expect((await list('10.0.0.1')).statusCode).toBe(200);
    const direct = new Redis(redis.url);
    try {
      expect((await direct.keys('*ip:10.0.0.1*')).length).toBe(1);
    } finally {
      direct.disconnect();
    }
    expect(await metric('platform_redis_up')).toBe(1);

    redis.pause();
    try {
      // Every request answered quickly: at most one command timeout before the process counts alone.
      const statuses: number[] = [];
      for (let i = 0; i < PER_IP + 2; i++) {
        const started = Date.now();
        const res = await list('10.0.0.2');
        expect(Date.now() - started).toBeLessThan(3_000);
        statuses.push(res.statusCode);
      }
      // The per-IP limit still holds, per process.
      expect(statuses).toEqual([...Array(PER_IP).fill(200), 429, 429]);
      expect(await metric('platform_redis_up')).toBe(0);
      expect(await metric('platform_rate_limit_local_total')).toBeGreaterThanOrEqual(PER_IP + 2);
    } finally {
      redis.resume();
    }

    // Redis answers again: the counters are shared again.
    await eventually(
      async () => ((await metric('platform_redis_up')) === 1 ? true : undefined),
      30_000,
      'redis up',
    );
    expect((await list('10.0.0.3')).statusCode).toBe(200);
    const after = new Redis(redis.url);
    try {
      expect((await after.keys('*ip:10.0.0.3*')).length).toBe(1);
    } finally {
      after.disconnect();
    }
  }, 60_000);
});
