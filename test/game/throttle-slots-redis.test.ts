import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSlots } from '../../src/modules/game/redis-slots.js';
import type { TakeResult } from '../../src/modules/game/throttle-slots.js';
import { testRedis } from '../helpers/platform.js';
import { redisAvailable } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const withRedis = await redisAvailable();
const LEASE_MS = 10_000;
const WINDOW_MS = 3_000;

function ticketOf(result: TakeResult): string {
  if (!('ticket' in result)) throw new Error(`no slot: wait ${result.waitMs} ms`);
  return result.ticket;
}

describe.skipIf(!withRedis)('RedisSlots: one round trip per call', () => {
  let redis: Redis;
  let monitor: Redis;
  const seen: string[][] = [];
  const key = `test-slots-${randomBytes(6).toString('hex')}`;
  const redisNow = async () => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  const scoreOf = async (ticket: string) => Number(await redis.zscore(key, ticket));

  beforeAll(async () => {
    redis = testRedis();
    monitor = await testRedis().monitor();
    // The calls this process makes (not the commands its scripts run inside Redis).
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args.includes(key) && /^eval/i.test(args[0] ?? '') && !source.includes('lua')) seen.push(args);
    });
  });
  afterAll(async () => {
    await redis?.del(key);
    monitor?.disconnect();
    redis?.disconnect();
  });

  it('carries releases on the next take, each slot freed a window after its answer', async () => {
    // Releases wait (up to a minute here) for the next take to carry them.
    // A 3 s window: slow steps on a busy machine must not let the first slot free up mid-test.
    const slots = new RedisSlots(redis, key, 2, WINDOW_MS, LEASE_MS, { flushMs: 60_000 });
    const a = ticketOf(await slots.tryTake());
    const answeredFrom = await redisNow();
    await slots.release(a);
    // Not sent yet: the slot is still leased (scored in the future).
    expect(await scoreOf(a)).toBeGreaterThan(answeredFrom + WINDOW_MS);
    const b = ticketOf(await slots.tryTake());
    const after = await redisNow();
    // The take applied the release: scored at its answer, never before it.
    expect(await scoreOf(a)).toBeGreaterThanOrEqual(answeredFrom);
    expect(await scoreOf(a)).toBeLessThanOrEqual(after);
    // The script names the slots it grants after the call's base (`<base>.1`).
    const base = (ticket: string) => ticket.replace(/\.\d+$/, '');
    await until(() => seen.some((args) => args.includes(base(b))), 'the monitor to report the take');
    // a went back as part of the call that took b (no call of its own).
    const withA = seen.filter((args) => args.includes(a));
    expect(withA).toHaveLength(1);
    expect(withA[0]).toContain(base(b));
    expect(seen.filter((args) => args.includes(base(a)))).toHaveLength(1);

    // Both slots taken, one answered: the next frees one window after that answer.
    const full = await slots.tryTake();
    expect('waitMs' in full && full.waitMs > 0 && full.waitMs <= WINDOW_MS).toBe(true);
    await slots.release(b);
    await slots.flush();
    await until(async () => 'ticket' in (await slots.tryTake()), 'a slot a window after its answer', 10_000);
    expect(await redisNow()).toBeGreaterThanOrEqual((await scoreOf(a)) + WINDOW_MS);
  });

  it('sends a release on its own when no take comes to carry it', async () => {
    const slots = new RedisSlots(redis, key, 25, 1000, LEASE_MS);
    const t = ticketOf(await slots.tryTake());
    const answeredFrom = await redisNow();
    await slots.release(t);
    const score = await until(async () => {
      const s = await scoreOf(t);
      return s <= (await redisNow()) ? s : undefined;
    }, 'the release to reach Redis');
    expect(score).toBeGreaterThanOrEqual(answeredFrom);
  });

  it('two stores on one key never grant more than the limit', async () => {
    const a = new RedisSlots(redis, `${key}:shared`, 3, 60_000, LEASE_MS);
    const b = new RedisSlots(redis, `${key}:shared`, 3, 60_000, LEASE_MS);
    const results = await Promise.all([a, b, a, b, a, b].map((s) => s.tryTake()));
    expect(results.filter((r) => 'ticket' in r)).toHaveLength(3);
    await redis.del(`${key}:shared`);
  });

  it('slots taken ahead never let two processes together exceed the limit in any window', async () => {
    // Two processes that each keep up to 4 slots ahead of a limit of 6: if slots taken ahead were
    // not counted (or counted once per call), requests flowing as fast as slots are granted would
    // pass 6 in some window. A 600 ms window keeps the run short while slots free up many times.
    const shared = `${key}:ahead`;
    const limit = 6;
    const windowMs = 600;
    const stores = [0, 1].map(
      () => new RedisSlots(redis, shared, limit, windowMs, LEASE_MS, { ahead: 4, holdMs: 250, flushMs: 5 }),
    );
    const used: number[] = [];
    let fromSpares = 0;
    const runUntil = performance.now() + 3 * windowMs;
    const worker = async (slots: RedisSlots) => {
      while (performance.now() < runUntil) {
        const spares = slots.spareCount;
        const result = await slots.tryTake();
        if ('ticket' in result) {
          if (spares > 0) fromSpares += 1;
          used.push(performance.now());
          // Answered at once: the slot frees one window later.
          await slots.release(result.ticket);
        } else await new Promise((r) => setTimeout(r, Math.min(result.waitMs, 20)));
      }
    };
    await Promise.all(stores.flatMap((s) => [worker(s), worker(s), worker(s)]));
    await Promise.all(stores.map((s) => s.flush()));
    const sorted = used.sort((x, y) => x - y);
    let busiest = 0;
    for (let end = 0, start = 0; end < sorted.length; end += 1) {
      while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start += 1;
      busiest = Math.max(busiest, end - start + 1);
    }
    expect(busiest).toBeLessThanOrEqual(limit);
    // It ran at the limit (the bound was tested, not idled under), partly on slots taken ahead.
    expect(used.length).toBeGreaterThanOrEqual(2 * limit);
    expect(fromSpares).toBeGreaterThan(0);
    await redis.del(shared);
  });

  it('an idle process hands its slots taken ahead back within their hold time', async () => {
    const shared = `${key}:idle`;
    const slots = new RedisSlots(redis, shared, 25, 1000, LEASE_MS, { ahead: 3, holdMs: 100, flushMs: 5 });
    const t = ticketOf(await slots.tryTake());
    // The request's slot and three ahead.
    expect(await redis.zcard(shared)).toBe(4);
    expect(slots.spareCount).toBe(3);
    await slots.release(t);
    // Unused, they go back (removed: nothing was sent on them); the answered one stays its window.
    await until(async () => (await redis.zcard(shared)) === 1, 'the unused slots to be handed back');
    expect(await redis.zscore(shared, t)).not.toBeNull();
    expect(slots.spareCount).toBe(0);
    await redis.del(shared);
  });

  it('takes slots ahead only while the reserve stays free for the other processes', async () => {
    const shared = `${key}:reserve`;
    const a = new RedisSlots(redis, shared, 5, 60_000, LEASE_MS, { ahead: 4, reserve: 2, holdMs: 60_000 });
    ticketOf(await a.tryTake());
    // 1 needed + 2 ahead, leaving the reserve of 2.
    expect(await redis.zcard(shared)).toBe(3);
    const b = new RedisSlots(redis, shared, 5, 60_000, LEASE_MS, { ahead: 4, reserve: 2, holdMs: 60_000 });
    ticketOf(await b.tryTake());
    ticketOf(await b.tryTake());
    expect(await redis.zcard(shared)).toBe(5);
    expect('waitMs' in (await b.tryTake())).toBe(true);
    await a.flush();
    await b.flush();
    await redis.del(shared);
  });
});
