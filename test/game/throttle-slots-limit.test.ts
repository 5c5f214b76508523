import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSlots } from '../../src/modules/game/redis-slots.js';
import type { TakeResult } from '../../src/modules/game/throttle-slots.js';
import { testRedis } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable } from '../helpers/services.js';
import { until } from '../helpers/until.js';

// The shared limit of the Redis slots, with slots taken ahead, on a connection of their own: apart from
// the round-trip file's MONITOR connection, whose failure under load would stop these tests running.
const withRedis = await redisAvailable();
const LEASE_MS = 10_000;

/**
 * A TCP relay in front of Redis that can hold Redis's replies back (`hold`): the commands still
 * reach Redis and run, but their answers are lost to the client until `pass`.
 */
async function replyHoldingRelay(): Promise<{
  url: string;
  hold(on: boolean): void;
  close(): Promise<void>;
}> {
  const target = new URL(REDIS_URL);
  let holding = false;
  const links: Array<{ held: Buffer[]; client: Socket; upstream: Socket }> = [];
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const link = { held: [] as Buffer[], client, upstream };
    links.push(link);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (holding) link.held.push(chunk);
      else client.write(chunk);
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    hold(on) {
      holding = on;
      if (!on) for (const link of links) for (const chunk of link.held.splice(0)) link.client.write(chunk);
    },
    async close() {
      for (const link of links) link.client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function ticketOf(result: TakeResult): string {
  if (!('ticket' in result)) throw new Error(`no slot: wait ${result.waitMs} ms`);
  return result.ticket;
}

describe.skipIf(!withRedis)('RedisSlots: the shared limit with slots taken ahead', () => {
  let redis: Redis;
  const key = `test-slots-limit-${randomBytes(6).toString('hex')}`;

  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis?.del(key);
    redis?.disconnect();
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
    // Redis scores in whole milliseconds (its TIME, a release's elapsed time rounded down) while these
    // uses are timed in fractions on this process's clock: two uses just under a window apart here can be
    // a whole window apart in Redis. Windows a few milliseconds shorter leave that rounding out.
    const measured = windowMs - 5;
    for (let end = 0, start = 0; end < sorted.length; end += 1) {
      while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= measured) start += 1;
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

  it('a burst of calls in one process keeps at most `ahead` slots taken ahead', async () => {
    const shared = `${key}:burst`;
    const slots = new RedisSlots(redis, shared, 25, 60_000, LEASE_MS, { ahead: 2, holdMs: 60_000 });
    // Ten calls at once, none with a spare: the first asks for 2 ahead, the others for none.
    const results = await Promise.all(Array.from({ length: 10 }, () => slots.tryTake()));
    for (const r of results) ticketOf(r);
    expect(slots.spareCount).toBe(2);
    expect(await redis.zcard(shared)).toBe(12);
    await slots.flush();
    await redis.del(shared);
  });

  it('a call whose reply is lost hands back what it may have been granted', async () => {
    const shared = `${key}:lost`;
    const relay = await replyHoldingRelay();
    const relayed = new Redis(relay.url, { maxRetriesPerRequest: 1, commandTimeout: 500 });
    try {
      // Loads the script into Redis, so the call below runs it by SHA.
      const warm = new RedisSlots(relayed, `${shared}:warm`, 25, 60_000, LEASE_MS);
      ticketOf(await warm.tryTake());
      await redis.del(`${shared}:warm`);
      const slots = new RedisSlots(relayed, shared, 25, 60_000, LEASE_MS, { ahead: 2, flushMs: 5 });
      relay.hold(true);
      const lost = slots.tryTake();
      await until(async () => (await redis.zcard(shared)) === 3, 'the call to run in Redis', 5_000);
      await expect(lost).rejects.toThrow();
      // The call ran in Redis: the slot it asked for and 2 ahead were granted, then the reply was lost.
      // They go back with the next call to Redis, not after the lease.
      await until(async () => (await redis.zcard(shared)) === 0, 'the lost slots to be handed back', 5_000);
    } finally {
      relay.hold(false);
      relayed.disconnect();
      await relay.close();
      await redis.del(shared);
    }
  });
});
