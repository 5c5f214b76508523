import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { redisHealthOf } from '../queue/redis-health.js';
import type { CounterStore, WindowCount } from './counter-store.js';
import { FailoverCounterStore } from './failover-counter-store.js';

// The counters never refuse on their own: limits differ per key, so callers compare.
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Counters shared by every process: rate-limiter-flexible's atomic Lua `INCRBY` on Redis. */
class RlfCounterStore implements CounterStore {
  private readonly limiters = new Map<number, RateLimiterAbstract>();

  constructor(
    readonly kind: 'memory' | 'redis',
    private readonly make: (windowSeconds: number) => RateLimiterAbstract,
  ) {}

  private limiter(windowSeconds: number): RateLimiterAbstract {
    let limiter = this.limiters.get(windowSeconds);
    if (!limiter) {
      limiter = this.make(windowSeconds);
      this.limiters.set(windowSeconds, limiter);
    }
    return limiter;
  }

  async hit(key: string, windowSeconds: number, points = 1): Promise<WindowCount> {
    try {
      const res = await this.limiter(windowSeconds).consume(key, points);
      return { count: res.consumedPoints, resetMs: res.msBeforeNext };
    } catch (error) {
      if (error instanceof RateLimiterRes)
        return { count: error.consumedPoints, resetMs: error.msBeforeNext };
      throw error;
    }
  }

  async peek(key: string, windowSeconds: number): Promise<WindowCount | null> {
    const res = await this.limiter(windowSeconds).get(key);
    return res ? { count: res.consumedPoints, resetMs: res.msBeforeNext } : null;
  }
}

/** `prefix` is REDIS_PREFIX: counters of platforms sharing one Redis stay apart. */
function redisCounterStore(client: Redis, prefix = 'platform:'): CounterStore {
  return new RlfCounterStore(
    'redis',
    (duration) =>
      new RateLimiterRedis({
        storeClient: client,
        points: UNLIMITED,
        duration,
        keyPrefix: `${prefix}rl:w${duration}`,
        // Not connected: fail at once (the failover store counts in memory), never wait in a queue.
        rejectIfRedisNotReady: true,
      }),
  );
}

/**
 * The counters of a platform on Redis: shared while Redis answers, per process while it does not
 * (a warning when it goes, a line when it is back; `platform_rate_limit_local_total` counts).
 */
export function failoverRedisCounterStore(
  client: Redis,
  prefix: string,
  commandTimeoutMs: number,
  log: { warn(msg: string): void; info(msg: string): void },
): CounterStore {
  return new FailoverCounterStore(
    redisCounterStore(client, prefix),
    redisHealthOf(client, commandTimeoutMs),
    {
      onSwitch: (status) =>
        status === 'down'
          ? log.warn('Redis does not answer: rate limits count per process until it does')
          : log.info('Redis answers again: rate limits are shared again'),
    },
  );
}
