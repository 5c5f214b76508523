import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';

export interface WindowCount {
  /** Points counted in the current window, including this hit. */
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

/**
 * Fixed-window counters. Every hit is one atomic increment (a Lua script on Redis, a
 * synchronous map update in-process), so N allowed means exactly N, never N+1.
 */
export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  hit(key: string, windowSeconds: number, points?: number): Promise<WindowCount>;
  peek(key: string, windowSeconds: number): Promise<WindowCount | null>;
}

// The counters never refuse on their own: limits differ per key, so callers compare.
const UNLIMITED = Number.MAX_SAFE_INTEGER;

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

export function memoryCounterStore(): CounterStore {
  return new RlfCounterStore(
    'memory',
    (duration) => new RateLimiterMemory({ points: UNLIMITED, duration, keyPrefix: `w${duration}` }),
  );
}

export function redisCounterStore(client: Redis, prefix = 'platform:rl'): CounterStore {
  return new RlfCounterStore(
    'redis',
    (duration) =>
      new RateLimiterRedis({
        storeClient: client,
        points: UNLIMITED,
        duration,
        keyPrefix: `${prefix}:w${duration}`,
      }),
  );
}
