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
});
