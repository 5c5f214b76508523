import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A granted slot, to release when its request has been answered (or failed). */
export type Ticket = string;
export type TakeResult = { ticket: Ticket } | { waitMs: number };

/**
 * Where outbound slots are counted: at most `limit` per `windowMs`. A slot is held while its
 * request is in flight and for a whole window after it was answered. The upstream sees the
 * request at some moment between grant and answer, so two requests on the same slot always
 * arrive at least one window apart, whatever the network latency: no 1-second window of
 * arrivals can hold more than `limit` requests.
 */
export interface SlotStore {
  readonly kind: 'memory' | 'redis';
  tryTake(): Promise<TakeResult>;
  release(ticket: Ticket): Promise<void>;
}

/** While every slot is in flight, the next one frees up at an unknown time: look again this often. */
export const POLL_MS = 20;

/** In-process slots: the answer time of each request (Infinity while in flight). */
export class LocalSlots implements SlotStore {
  readonly kind = 'memory';
  private readonly slots = new Map<Ticket, number>();
  private counter = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Synchronous inside, so concurrent callers in one process can never both take the last slot. */
  async tryTake(): Promise<TakeResult> {
    const now = this.now();
    let oldest = Number.POSITIVE_INFINITY;
    for (const [ticket, answeredAt] of this.slots) {
      if (answeredAt <= now - this.windowMs) this.slots.delete(ticket);
      else oldest = Math.min(oldest, answeredAt);
    }
    if (this.slots.size < this.limit) {
      this.counter += 1;
      const ticket = `l${this.counter}`;
      this.slots.set(ticket, Number.POSITIVE_INFINITY);
      return { ticket };
    }
    if (oldest === Number.POSITIVE_INFINITY) return { waitMs: POLL_MS };
    return { waitMs: Math.max(1, Math.ceil(oldest + this.windowMs - now)) };
  }

  async release(ticket: Ticket): Promise<void> {
    if (this.slots.has(ticket)) this.slots.set(ticket, this.now());
  }
}

// Scores are Redis server times (ms), the only clock all processes share. An in-flight slot is
// scored at the end of its lease (in the future), so a crashed process cannot hold it forever.
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], lease + window + 1000)
  return -1
end
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
if oldest > now then return 0 end
return math.max(1, oldest + window - now)
`;

const RELEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
end
return 1
`;

/** The same slots in one Redis sorted set, shared by every process. */
export class RedisSlots implements SlotStore {
  readonly kind = 'redis';
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly limit: number,
    private readonly windowMs: number,
    /** Longest a request may hold a slot without releasing it (its timeout, plus a margin). */
    private readonly leaseMs: number,
  ) {}

  async tryTake(): Promise<TakeResult> {
    this.counter += 1;
    const ticket = `${this.prefix}:${this.counter}`;
    const result = Number(
      await this.redis.eval(TAKE_SCRIPT, 1, this.key, this.limit, this.windowMs, ticket, this.leaseMs),
    );
    if (result === -1) return { ticket };
    return { waitMs: result === 0 ? POLL_MS : result };
  }

  async release(ticket: Ticket): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.key, ticket);
  }
}
