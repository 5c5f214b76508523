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
  /** Sends releases still queued in this process (before it closes). */
  flush?(): Promise<void>;
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
// The releases of this process since its last call come first (ARGV[5..]: ticket, ms since its
// answer): each answered slot is scored at `now - elapsed`, never earlier than the moment its
// answer arrived (the script runs after the elapsed time was measured), so a release carried
// late still frees its slot exactly one window after the answer. ARGV[3] '' only releases.
const SLOTS_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 5, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now - tonumber(ARGV[i + 1]), ARGV[i])
  end
end
if ARGV[3] == '' then return -2 end
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

/** Releases wait this long at most for the next take to carry them. */
export const RELEASE_FLUSH_MS = 50;
/** A release's ticket and when its answer arrived (performance.now()). */
type Answered = { ticket: Ticket; at: number };
type SlotsCommand = (key: string, ...args: Array<string | number>) => Promise<number>;

/**
 * The same slots in one Redis sorted set, shared by every process. One round trip per call:
 * releases are queued and ride on the next take (or go on their own after RELEASE_FLUSH_MS),
 * and the script is loaded once and then run by its SHA.
 */
export class RedisSlots implements SlotStore {
  readonly kind = 'redis';
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;
  private answered: Answered[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly run: SlotsCommand;

  constructor(
    redis: Redis,
    private readonly key: string,
    private readonly limit: number,
    private readonly windowMs: number,
    /** Longest a request may hold a slot without releasing it (its timeout, plus a margin). */
    private readonly leaseMs: number,
    private readonly onError: (error: unknown) => void = () => undefined,
    private readonly flushMs = RELEASE_FLUSH_MS,
  ) {
    const commands = redis as unknown as Record<string, SlotsCommand | undefined>;
    if (!commands.gameOutboundSlots) {
      redis.defineCommand('gameOutboundSlots', { numberOfKeys: 1, lua: SLOTS_SCRIPT });
    }
    const command = commands.gameOutboundSlots as SlotsCommand;
    this.run = (key, ...args) => command.call(redis, key, ...args);
  }

  async tryTake(): Promise<TakeResult> {
    this.counter += 1;
    const ticket = `${this.prefix}:${this.counter}`;
    const carried = this.takeAnswered();
    let result: number;
    try {
      result = Number(
        await this.run(
          this.key,
          this.limit,
          this.windowMs,
          ticket,
          this.leaseMs,
          ...releaseArgs(carried, performance.now()),
        ),
      );
    } catch (error) {
      this.requeue(carried);
      throw error;
    }
    if (result === -1) return { ticket };
    return { waitMs: result === 0 ? POLL_MS : result };
  }

  async release(ticket: Ticket): Promise<void> {
    this.answered.push({ ticket, at: performance.now() });
    this.scheduleFlush();
  }

  /** Sends the queued releases now (on a timer, and when the platform closes). */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const carried = this.takeAnswered();
    if (carried.length === 0) return;
    try {
      await this.run(
        this.key,
        this.limit,
        this.windowMs,
        '',
        this.leaseMs,
        ...releaseArgs(carried, performance.now()),
      );
    } catch (error) {
      this.requeue(carried);
      throw error;
    }
  }

  /** Releases Redis did not apply go with the next call, until their slot's lease has run out anyway. */
  private requeue(carried: readonly Answered[]): void {
    const since = performance.now() - this.leaseMs;
    this.answered.unshift(...carried.filter((a) => a.at > since));
    if (this.answered.length > 0) this.scheduleFlush();
  }

  private takeAnswered(): Answered[] {
    const carried = this.answered;
    this.answered = [];
    return carried;
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush().catch(this.onError);
    }, this.flushMs);
    this.flushTimer.unref();
  }
}

/** Ticket and whole milliseconds since its answer (rounded down: never before the answer). */
function releaseArgs(carried: readonly Answered[], now: number): Array<string | number> {
  return carried.flatMap(({ ticket, at }) => [ticket, Math.max(0, Math.floor(now - at))]);
}
