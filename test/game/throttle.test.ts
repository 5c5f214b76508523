import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable } from '../helpers/services.js';
import { FakeGamePlatform } from './fake-game-platform.js';

const modules = [authModule, healthModule, gameModule];
const LIMIT = 25;

/** The most requests the fake saw in any 1-second window (arrival times, sliding). */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= 1000) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

const burst = (p: TestPlatform, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) => p.request({ method: 'GET', url: `/game/GroupV2/Name/c${i}/1` })),
  );

describe('outbound throttle (one process)', () => {
  let fake: FakeGamePlatform;
  let p: TestPlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env() });
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('never sends more than 25 requests in any second under a burst of 100', async () => {
    const answers = await burst(p, 100);
    for (const res of answers) expect(res.statusCode).toBe(200);
    const times = fake.apiRequests().map((r) => r.at);
    expect(times).toHaveLength(100);
    expect(busiestSecond(times)).toBeLessThanOrEqual(LIMIT);
    // …and it is a throttle, not a stall: 100 requests take about 4 windows.
    expect(Math.max(...times) - Math.min(...times)).toBeLessThan(6_000);
  }, 20_000);
});

describe('upstream connections', () => {
  let fake: FakeGamePlatform;
  let p: TestPlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env() });
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('calls one after the other reuse one kept-alive connection to the upstream', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await p.request({ method: 'GET', url: `/game/GroupV2/Name/keep${i}/1` });
      expect(res.statusCode).toBe(200);
    }
    expect(fake.apiRequests()).toHaveLength(5);
    expect(fake.connections).toBe(1);
  });
});

describe('outbound throttle: bounded queue', () => {
  let fake: FakeGamePlatform;
  let p: TestPlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({
      dialect: 'sqlite',
      modules,
      env: fake.env({ GAME_RATE_PER_SECOND: '1', GAME_QUEUE_MAX: '2' }),
    });
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('refuses requests beyond the queue with 429', async () => {
    const answers = await burst(p, 6);
    const codes = answers.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 429, 429, 429]);
    const refused = answers.find((r) => r.statusCode === 429);
    expect(refused?.json().code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused?.headers['retry-after']).toBeDefined();
  });
});

describe('upstream failures and configuration', () => {
  let fake: FakeGamePlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
  });
  afterAll(async () => {
    await fake?.stop();
  });

  it('answers 503 naming the missing setting without GAME_API_KEY', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env({ GAME_API_KEY: '' }) });
    try {
      for (const url of ['/game/Destiny2/Manifest', '/game/GroupV2/Name/x/1', '/game/oauth/authorize']) {
        const res = await p.request({ method: 'GET', url });
        expect(res.statusCode, url).toBe(503);
        expect(res.json()).toMatchObject({
          code: 'SERVICE_UNAVAILABLE',
          details: { missingSettings: ['GAME_API_KEY'] },
        });
        expect(res.json().message).toContain('GAME_API_KEY');
      }
      expect(fake.requests).toHaveLength(0);
    } finally {
      await p.close();
    }
  });

  it('answers 503 for OAuth without client credentials', async () => {
    const p = await createTestPlatform({
      dialect: 'sqlite',
      modules,
      env: fake.env({ GAME_OAUTH_CLIENT_ID: '', GAME_OAUTH_CLIENT_SECRET: '' }),
    });
    try {
      const res = await p.request({ method: 'GET', url: '/game/oauth/authorize' });
      expect(res.statusCode).toBe(503);
      expect(res.json().details.missingSettings).toEqual([
        'GAME_OAUTH_CLIENT_ID',
        'GAME_OAUTH_CLIENT_SECRET',
      ]);
    } finally {
      await p.close();
    }
  });

  it('502 when the upstream is unreachable or too slow', async () => {
    const down = await createTestPlatform({
      dialect: 'sqlite',
      modules,
      env: fake.env({ GAME_API_URL: 'http://127.0.0.1:1/Platform' }),
    });
    const slow = await createTestPlatform({
      dialect: 'sqlite',
      modules,
      env: fake.env({ GAME_TIMEOUT_MS: '200' }),
    });
    try {
      const unreachable = await down.request({ method: 'GET', url: '/game/GroupV2/Name/x/1' });
      expect(unreachable.statusCode).toBe(502);
      expect(unreachable.json().details.reason).toBe('unreachable');

      fake.script.push({ delayMs: 1000 });
      const timedOut = await slow.request({ method: 'GET', url: '/game/GroupV2/Name/x/1' });
      expect(timedOut.statusCode).toBe(502);
      expect(timedOut.json().details).toMatchObject({ reason: 'timeout', timeoutMs: 200 });
    } finally {
      await down.close();
      await slow.close();
    }
  });

  it('gives up after bounded retries when the upstream keeps throttling', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env() });
    try {
      for (let i = 0; i < 4; i += 1)
        fake.script.push({ errorCode: 51, errorStatus: 'PerEndpointRequestThrottleExceeded' });
      const before = fake.apiRequests().length;
      const res = await p.request({ method: 'GET', url: '/game/GroupV2/Name/x/1' });
      expect(res.statusCode).toBe(503);
      expect(res.json().details).toMatchObject({ upstreamCode: 51 });
      expect(res.headers['retry-after']).toBeDefined();
      expect(fake.apiRequests().length - before).toBe(4);
    } finally {
      await p.close();
    }
  });
});

const withRedis = await redisAvailable();

describe.skipIf(!withRedis)('outbound throttle across processes (Redis)', () => {
  let fake: FakeGamePlatform;
  let a: TestPlatform;
  let b: TestPlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    a = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env(), redis: true });
    b = await createTestPlatform({ dialect: 'sqlite', modules, env: fake.env(), redis: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fake?.stop();
  });

  it('two processes together stay within 25 requests in any second', async () => {
    const answers = await Promise.all([burst(a, 60), burst(b, 60)]);
    for (const res of answers.flat()) expect(res.statusCode).toBe(200);
    const times = fake.apiRequests().map((r) => r.at);
    expect(times).toHaveLength(120);
    expect(busiestSecond(times)).toBeLessThanOrEqual(LIMIT);
  }, 20_000);
});
