import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { redisHealthOf } from '../queue/redis-health.js';
import type { CounterStep, CounterStore, StepCounts, WindowCount } from './counter-store.js';
import { FailoverCounterStore } from './failover-counter-store.js';

// The counters never refuse on their own: limits differ per key, so callers compare.
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * `CounterStore.steps` in one script: each step is rate-limiter-flexible's own hit (its Lua
 * `INCRBY` with the window's expiry) or get (count and PTTL) on the same keys, so the counters read
 * and written here are the ones `hit` and `peek` use; a hit never takes a counter below zero. ARGV
 * holds five values per key: op (`h` or `p`), points, window seconds, stopAt and stopAtTotal (-1:
 * never stop). Returns count and milliseconds left per step run; a peek of a window that is not open
 * gives count -1.
 */
const STEPS_SCRIPT = `
local out = {}
local total = 0
for i = 1, #KEYS do
  local a = (i - 1) * 5
  local seconds = ARGV[a + 3]
  local stopAt = tonumber(ARGV[a + 4])
  local stopAtTotal = tonumber(ARGV[a + 5])
  local count, ttl
  if ARGV[a + 1] == 'h' then
    redis.call('set', KEYS[i], 0, 'EX', seconds, 'NX')
    count = redis.call('incrby', KEYS[i], ARGV[a + 2])
    if count < 0 then
      redis.call('decrby', KEYS[i], count)
      count = 0
    end
    ttl = redis.call('pttl', KEYS[i])
    if ttl == -1 then
      redis.call('expire', KEYS[i], seconds)
      ttl = 1000 * seconds
    end
  else
    local value = redis.call('get', KEYS[i])
    if value then
      count = tonumber(value)
      ttl = redis.call('pttl', KEYS[i])
    else
      count = -1
      ttl = 0
    end
  end
  out[#out + 1] = count
  out[#out + 1] = ttl
  if count > 0 then total = total + count end
  if stopAt >= 0 and count >= stopAt then break end
  if stopAtTotal >= 0 and total >= stopAtTotal then break end
end
return out
`;

type StepsCommand = (numberOfKeys: number, ...keysAndArgs: Array<string | number>) => Promise<number[]>;

/** Counters shared by every process: rate-limiter-flexible's atomic Lua `INCRBY` on Redis. */
class RlfCounterStore implements CounterStore {
  private readonly limiters = new Map<number, RateLimiterAbstract>();
  private readonly runSteps: StepsCommand;

  constructor(
    readonly kind: 'memory' | 'redis',
    private readonly client: Redis,
    private readonly prefix: string,
    private readonly make: (windowSeconds: number) => RateLimiterAbstract,
  ) {
    const commands = client as unknown as Record<string, StepsCommand | undefined>;
    if (!commands.platformCounterSteps) client.defineCommand('platformCounterSteps', { lua: STEPS_SCRIPT });
    const command = commands.platformCounterSteps as StepsCommand;
    this.runSteps = (...args) => command.call(client, ...args);
  }

  /** The key rate-limiter-flexible gives `key` in a window of `windowSeconds` (its keyPrefix). */
  private redisKey(key: string, windowSeconds: number): string {
    return `${this.prefix}rl:w${windowSeconds}:${key}`;
  }

  async steps(list: readonly CounterStep[]): Promise<StepCounts> {
    if (list.length === 0) return [];
    // As rate-limiter-flexible with rejectIfRedisNotReady: not connected fails at once.
    if (this.client.status !== 'ready') throw new Error('Redis connection is not ready');
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const step of list) {
      const points = step.points ?? 1;
      if (!Number.isInteger(points)) throw new Error('Counters take whole points');
      keys.push(this.redisKey(step.key, step.windowSeconds));
      args.push(
        step.op === 'hit' ? 'h' : 'p',
        points,
        step.windowSeconds,
        step.stopAt ?? -1,
        step.stopAtTotal ?? -1,
      );
    }
    const reply = await this.runSteps(keys.length, ...keys, ...args);
    const counts: StepCounts = [];
    for (let i = 0; i + 1 < reply.length; i += 2) {
      const count = Number(reply[i]);
      counts.push(count < 0 ? null : { count, resetMs: Number(reply[i + 1]) });
    }
    return counts;
  }

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
    client,
    prefix,
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
