import { afterEach, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';

const redisUp = await redisAvailable();
const backends = [false, ...(redisUp ? [true] : [])];

// Redis counters outlive a run: every test takes fresh client addresses.
const octet = () => Math.floor(Math.random() * 254) + 1;
const freshIp = () => `10.${octet()}.${octet()}.${octet()}`;

const ip0 = freshIp();
const ip1 = freshIp();
const ip2 = freshIp();
const ip3 = freshIp();
const ip4 = freshIp();

let open: TestPlatform[] = [];
afterEach(async () => {
  await Promise.all(open.map((p) => p.close()));
  open = [];
});

async function platform(env: Record<string, string>, redis: boolean): Promise<TestPlatform> {
  const p = await createTestPlatform({
    dialect: 'sqlite',
    env,
    redis,
    modules: [authModule, healthModule, probeModule],
  });
  open.push(p);
  return p;
}

function expect429(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  limit: number,
) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toMatchObject({ error: true, code: 'RATE_LIMIT_EXCEEDED' });
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  const nowS = Math.floor(Date.now() / 1000);
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(nowS);
  const retry = Number(res.headers['retry-after']);
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(60);
}

describe.each(backends)('short-window limiters (redis: %s)', (redis) => {
  it('per IP: headers and Retry-After on the 429, other addresses unaffected, public limited routes too', async () => {
    const p = await platform({ RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_SECONDS: '60' }, redis);
    const from = (remoteAddress: string) => p.request({ method: 'GET', url: '/v1/usage', remoteAddress });
    expect((await from(ip0)).statusCode).toBe(200);
    expect((await from(ip0)).statusCode).toBe(200);
    expect429(await from(ip0), 2);
    expect((await from(ip1)).statusCode).toBe(200);
    // The per-IP budget covers public routes that opt in, and keyed ones alike.
    const pub = await p.request({
      method: 'POST',
      url: '/probe/public-limited',
      key: null,
      payload: {},
      remoteAddress: ip0,
    });
    expect429(pub, 2);
    // Public routes that do not opt in are never limited.
    expect(
      (await p.request({ method: 'GET', url: '/health', key: null, remoteAddress: ip0 })).statusCode,
    ).toBe(200);
  });

  it('per endpoint: exactly N of 3N concurrent calls pass, per caller', async () => {
    const N = 5;
    const p = await platform({ RATE_LIMIT_PER_ENDPOINT: String(N) }, redis);
    const other = await p.createKey({
      name: 'other',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    const results = await Promise.all(
      Array.from({ length: 3 * N }, () => p.request({ method: 'GET', url: '/probe/limited' })),
    );
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(N);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(2 * N);
    expect429(refused[0]!, N);
    // Only the N calls that passed used the day's quota (with createKey and this call: N + 2).
    const quota = await p.request({ method: 'GET', url: '/v1/usage' });
    const limit = Number(quota.headers['x-ratelimit-limit']);
    expect(Number(quota.headers['x-ratelimit-remaining'])).toBe(limit - (N + 2));
    // Another key on the same endpoint has its own budget.
    expect((await p.request({ method: 'GET', url: '/probe/limited', key: other.key })).statusCode).toBe(200);
  });

  it('failed authentications per IP block that IP for good keys, whatever header carried the bad one', async () => {
    const p = await platform({ AUTH_FAILURES_PER_IP: '3' }, redis);
    const ip = ip3;
    const bad = [
      { authorization: 'Bearer PROD_API_guess' },
      { 'x-api-key': 'DEV_API_guess' },
      { 'x-workflow-api-key': 'nonsense' },
    ];
    for (const headers of bad) {
      const res = await p.request({ method: 'GET', url: '/v1/usage', key: null, headers, remoteAddress: ip });
      expect(res.statusCode).toBe(401);
    }
    const blocked = await p.request({ method: 'GET', url: '/v1/usage', remoteAddress: ip });
    expect429(blocked, 3);
    // A blocked attempt does not need the database; other addresses are unaffected.
    expect((await p.request({ method: 'GET', url: '/v1/usage', remoteAddress: ip4 })).statusCode).toBe(200);
  });

  it('a window opens again when it ends', async () => {
    const p = await platform({ RATE_LIMIT_PER_IP: '1', RATE_LIMIT_WINDOW_SECONDS: '1' }, redis);
    const call = () => p.request({ method: 'GET', url: '/v1/usage', remoteAddress: ip2 });
    expect((await call()).statusCode).toBe(200);
    const refused = await call();
    expect(refused.statusCode).toBe(429);
    // What a client does: wait out Retry-After. The window's time must pass (a bound on time, so a
    // fixed wait; a loaded machine only makes it longer).
    await new Promise((r) => setTimeout(r, Number(refused.headers['retry-after']) * 1000 + 100));
    expect((await call()).statusCode).toBe(200);
  });
});

describe.each(backends)('daily token budgets (redis: %s)', (redis) => {
  const freshKey = () => `key_tokens_${Math.random().toString(36).slice(2)}`;

  /** Holds `points` and at once charges `tokens` in their place, as a call that ends does. */
  async function spend(
    limiter: TestPlatform['ctx']['limiter'],
    keyId: string,
    tokens: number,
    limit: number,
  ) {
    const { hold } = await limiter.reserveTokens(keyId, 1, limit);
    if (!hold) throw new Error('refused');
    return limiter.settleTokens(hold, tokens);
  }

  it('charges tokens against the UTC day, reads without counting, and starts afresh the next day', async () => {
    const p = await platform({}, redis);
    p.clock.set('2030-03-04T22:00:00.000Z');
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    const midnight = Date.parse('2030-03-05T00:00:00.000Z') / 1000;

    expect(await limiter.readTokenBudget(keyId, 100)).toEqual({
      allowed: true,
      limit: 100,
      remaining: 100,
      reset: midnight,
      retryAfter: 7_200,
      held: false,
    });
    expect(await spend(limiter, keyId, 30, 100)).toMatchObject({ allowed: true, remaining: 70 });
    // Reading counts nothing.
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: true, remaining: 70 });
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: true, remaining: 70 });
    // Exactly the budget: the charge fits, but no further request may start.
    expect(await spend(limiter, keyId, 70, 100)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: false, remaining: 0 });
    const spent = await limiter.reserveTokens(keyId, 5, 100);
    expect(spent).toMatchObject({ hold: null, held: false, decision: { allowed: false, retryAfter: 7_200 } });
    // A fraction counts as a whole token; nothing used gives the hold back whole.
    expect(await spend(limiter, keyId, 0.5, 200)).toMatchObject({ allowed: true, remaining: 99 });
    expect(await spend(limiter, keyId, 0, 200)).toMatchObject({ allowed: true, remaining: 99 });
    // Another key has its own count; the request quota is apart from the tokens.
    expect(await limiter.readTokenBudget(freshKey(), 100)).toMatchObject({ remaining: 100 });
    expect(await limiter.readDailyQuota(keyId, 10)).toMatchObject({ remaining: 10 });

    p.clock.advance(2 * 3_600);
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({
      allowed: true,
      remaining: 100,
      reset: midnight + 86_400,
    });
  });

  it("calls at once see each other's holds: admitted while charged + held < budget, the rest refused for a second", async () => {
    const p = await platform({}, redis);
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    const tries = await Promise.all(Array.from({ length: 8 }, () => limiter.reserveTokens(keyId, 30, 100)));
    const admitted = tries.filter((t) => t.hold);
    // 0, 30, 60 and 90 held before them are under 100; the others find 120 or more.
    expect(admitted).toHaveLength(4);
    for (const refused of tries.filter((t) => !t.hold)) {
      expect(refused.held).toBe(true);
      expect(refused.decision).toMatchObject({ allowed: false, retryAfter: 1, remaining: 0 });
    }
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: false, remaining: 0 });
    // The calls used less than they held: what they did not use is free again.
    for (const t of admitted) if (t.hold) await limiter.settleTokens(t.hold, 10);
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: true, remaining: 60 });
    // Settled calls hold nothing: a refusal now is a spent day, not a wait for calls in flight.
    await spend(limiter, keyId, 60, 100);
    const refused = await limiter.reserveTokens(keyId, 30, 100);
    expect(refused.held).toBe(false);
    expect(refused.decision.retryAfter).toBeGreaterThan(1);
  });

  it('a call held before midnight and ended after it is charged to the new day and frees the old', async () => {
    const p = await platform({}, redis);
    p.clock.set('2030-03-04T23:59:30.000Z');
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    const { hold } = await limiter.reserveTokens(keyId, 80, 100);
    expect(hold).not.toBeNull();
    p.clock.advance(60);
    expect(await limiter.settleTokens(hold as NonNullable<typeof hold>, 25)).toMatchObject({ remaining: 75 });
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 75 });
    p.clock.set('2030-03-04T23:59:40.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 100 });
  });

  it('a hold never settled (its process killed mid-call) stops counting after three hold windows', async () => {
    const p = await platform({}, redis);
    p.clock.set('2030-03-04T10:05:00.000Z');
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    // Taken and never settled: what a process killed mid-call, or Redis gone before the settle, leaves.
    expect((await limiter.reserveTokens(keyId, 100, 100)).hold).not.toBeNull();
    const during = await limiter.reserveTokens(keyId, 30, 100);
    expect(during).toMatchObject({ hold: null, held: true, decision: { retryAfter: 1 } });
    // Its window (10:00–10:15) and the two after count it; from 10:45 nothing holds the key. Once only
    // older windows refuse, the wait is to the end of the current one, not a second.
    p.clock.set('2030-03-04T10:29:59.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({
      allowed: false,
      held: true,
      retryAfter: 1,
    });
    p.clock.set('2030-03-04T10:44:00.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({
      allowed: false,
      held: true,
      retryAfter: 60,
    });
    p.clock.set('2030-03-04T10:45:00.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ allowed: true, remaining: 100 });
    const after = await limiter.reserveTokens(keyId, 30, 100);
    expect(after.hold).not.toBeNull();
    // Charges are the day's, whatever the holds: they stay after the windows pass.
    await limiter.settleTokens(after.hold as NonNullable<typeof after.hold>, 40);
    p.clock.set('2030-03-04T11:45:00.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 60 });
  });

  it('a hold taken at the end of a window counts for 30 minutes at least, and settles from its window', async () => {
    const p = await platform({}, redis);
    p.clock.set('2030-03-04T10:14:59.000Z');
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    const { hold } = await limiter.reserveTokens(keyId, 80, 100);
    expect(hold).not.toBeNull();
    p.clock.set('2030-03-04T10:44:58.000Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 20 });
    // A call of half an hour ends: its hold goes from its window, its tokens are charged.
    expect(await limiter.settleTokens(hold as NonNullable<typeof hold>, 10)).toMatchObject({ remaining: 90 });
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 90 });
  });

  it('a hold taken by a process whose clock is ahead (the next window) counts here already', async () => {
    const p = await platform({}, redis);
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    p.clock.set('2030-03-04T10:15:00.200Z');
    expect((await limiter.reserveTokens(keyId, 100, 100)).hold).not.toBeNull();
    // This process reads 0.4 s earlier: still the 10:00 window.
    p.clock.set('2030-03-04T10:14:59.800Z');
    expect(await limiter.readTokenBudget(keyId, 100)).toMatchObject({ remaining: 0, held: true });
    expect(await limiter.reserveTokens(keyId, 40, 100)).toMatchObject({
      hold: null,
      held: true,
      decision: { retryAfter: 1 },
    });
  });

  it('a release never takes a hold window below zero, so later holds still count whole', async () => {
    const p = await platform({}, redis);
    const limiter = p.ctx.limiter;
    const keyId = freshKey();
    const slot = Math.floor(p.clock.now().getTime() / 900_000);
    // A hold taken in another store (this process's, while Redis was down) and settled in this one.
    await limiter.settleTokens({ keyId, slot, points: 50, limit: 100 }, 0);
    expect((await limiter.reserveTokens(keyId, 100, 100)).hold).not.toBeNull();
    expect(await limiter.reserveTokens(keyId, 100, 100)).toMatchObject({ hold: null, held: true });
  });

  it('concurrent holds and charges add up exactly', async () => {
    const p = await platform({}, redis);
    const keyId = freshKey();
    const charges = Array.from({ length: 50 }, (_, i) => i + 1);
    await Promise.all(charges.map((n) => spend(p.ctx.limiter, keyId, n, 10_000)));
    const total = charges.reduce((a, b) => a + b, 0);
    expect(await p.ctx.limiter.readTokenBudget(keyId, 10_000)).toMatchObject({ remaining: 10_000 - total });
  });
});
