import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import {
  createTestPlatform,
  deleteRedisPrefixes,
  type TestPlatform,
  testRedis,
} from '../helpers/platform.js';
import { redisAvailable, uniqueName } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { probeModule } from './support/probe-module.js';

// The auth hook's limits (per IP, failed authentications, per endpoint, the daily quota) go to
// Redis as one call per request for a key verified before in this process; these tests count the
// commands Redis receives under the platform's own prefix (MONITOR) and pin the decisions the
// batched checks make against the counters of one-by-one calls.

const redisUp = await redisAvailable();
const backends = [false, ...(redisUp ? [true] : [])];

describe.skipIf(!redisUp)('auth hook round trips to Redis', () => {
  const prefix = `${uniqueName('rt')}:`;
  let p: TestPlatform;
  let monitor: Redis;
  let client: Redis;
  const seen: string[][] = [];

  beforeAll(async () => {
    p = await createTestPlatform({
      dialect: 'sqlite',
      redis: true,
      env: {
        REDIS_PREFIX: prefix,
        AUTH_FAILURES_PER_IP: '50',
        RATE_LIMIT_PER_IP: '1000',
        RATE_LIMIT_PER_ENDPOINT: '1000',
      },
      modules: [authModule, healthModule, probeModule],
    });
    client = testRedis();
    monitor = await client.monitor();
    // Commands the platform sends itself (not those its scripts run) that name one of its keys.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.some((a) => a.includes(prefix))) seen.push(args);
    });
  });
  afterAll(async () => {
    monitor?.disconnect();
    client?.disconnect();
    await p?.close();
    await deleteRedisPrefixes([prefix.slice(0, -1)]);
  });

  /** MONITOR has shown a command sent now (the commands before it are all in `seen`); its index. */
  async function mark(): Promise<number> {
    const marker = `${prefix}marker:${Math.random()}`;
    await client.get(marker);
    return until(() => {
      const at = seen.findIndex((args) => args.includes(marker));
      return at >= 0 ? at : undefined;
    }, 'a marker in MONITOR');
  }

  /** The commands sent while `fn` ran. */
  async function commandsOf(fn: () => Promise<unknown>): Promise<string[][]> {
    const from = await mark();
    await fn();
    const to = await mark();
    return seen.slice(from + 1, to);
  }

  it('a key verified before: one command per request, all four limits in it', async () => {
    const call = () => p.request({ method: 'GET', url: '/probe/limited', remoteAddress: '10.7.0.1' });
    expect((await call()).statusCode).toBe(200);
    const commands = await commandsOf(async () => {
      for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(200);
    });
    expect(commands).toHaveLength(5);
    const keys = commands[0]?.join(' ') ?? '';
    for (const part of ['win:ip:', 'win:authfail:', 'win:ep:', 'quota:']) expect(keys).toContain(part);
  });

  it('a key not verified before: the checks before and after its look-up, two commands', async () => {
    const { key } = await p.createKey({
      name: 'fresh',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    const commands = await commandsOf(async () => {
      const res = await p.request({ method: 'GET', url: '/v1/usage', key, remoteAddress: '10.7.0.2' });
      expect(res.statusCode).toBe(200);
    });
    expect(commands).toHaveLength(2);
  });

  it('a refused grant reads the quota in the same command and counts nothing', async () => {
    const { key } = await p.createKey({
      name: 'narrow',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    const usage = () => p.request({ method: 'GET', url: '/v1/usage', key, remoteAddress: '10.7.0.3' });
    const before = Number((await usage()).headers['x-ratelimit-remaining']);
    const commands = await commandsOf(async () => {
      const res = await p.request({ method: 'GET', url: '/probe/commerce', key, remoteAddress: '10.7.0.3' });
      expect(res.statusCode).toBe(403);
      expect(Number(res.headers['x-ratelimit-remaining'])).toBe(before);
    });
    expect(commands).toHaveLength(1);
    expect(Number((await usage()).headers['x-ratelimit-remaining'])).toBe(before - 1);
  });
});

describe.each(backends)('Limiter.check decides as one-by-one calls (redis: %s)', (redis) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', redis, modules: [authModule, healthModule] });
  });
  afterAll(async () => {
    await p?.close();
  });

  it('stops after the first refusal; what it did not reach is not counted', async () => {
    const limiter = p.ctx.limiter;
    const a = uniqueName('a');
    const b = uniqueName('b');
    const keyId = uniqueName('key');
    const checks = [
      { kind: 'window', name: a, limit: 2, windowSeconds: 60 },
      { kind: 'readWindow', name: b, limit: 1, windowSeconds: 60 },
      { kind: 'quota', keyId, limit: 10 },
    ] as const;
    const first = await limiter.check(checks);
    expect(first.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(first.map((d) => d.remaining)).toEqual([1, 1, 9]);
    // One failure counted in b: its read refuses now, and the quota after it is not counted.
    await limiter.hitWindow(b, 1, 60);
    const second = await limiter.check(checks);
    expect(second.map((d) => d.allowed)).toEqual([true, false]);
    expect(second[1]).toEqual(await limiter.readWindow(b, 1, 60));
    expect(await limiter.readDailyQuota(keyId, 10)).toMatchObject({ remaining: 9 });
    // The first window is spent: nothing after it runs, and the refusal carries its numbers.
    const third = await limiter.check(checks);
    expect(third).toHaveLength(1);
    expect(third[0]).toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    expect(third[0]?.retryAfter).toBeGreaterThan(0);
    expect(await limiter.readWindow(a, 100, 60)).toMatchObject({ remaining: 97 });
    // A read quota check never refuses nor counts.
    const read = await limiter.check([{ kind: 'readQuota', keyId, limit: 1 }]);
    expect(read).toEqual([await limiter.readDailyQuota(keyId, 1)]);
    expect(await limiter.readDailyQuota(keyId, 10)).toMatchObject({ remaining: 9 });
  });
});
