import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { POLL_MS, type SlotStore, type TakeResult, type Ticket } from './throttle-slots.js';

// Scores are Redis server times (ms), the only clock all processes share. A granted slot is scored
// at the end of its lease (in the future) until it is released, so a crashed process cannot hold it
// forever. First the releases of this process since its last call (ARGV[8] pairs from ARGV[9]:
// ticket, ms since its answer): each answered slot is scored at `now - elapsed`, never earlier than
// the moment its answer arrived (the script runs after the elapsed time was measured), so a release
// carried late still frees its slot exactly one window after the answer. Then the slots taken ahead
// and never used (the remaining ARGV), removed: no request went out on them. Then the grant: `need`
// (0 or 1) slot if any is free, plus up to `ahead` more while more than `reserve` stay free for the
// other processes, named `base.1`, `base.2`, … Returns {granted, waitMs}; waitMs -1: every slot is
// in flight (look again soon). ARGV[7] '' only releases.
const SLOTS_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local i = 9
for _ = 1, tonumber(ARGV[8]) do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now - tonumber(ARGV[i + 1]), ARGV[i])
  end
  i = i + 2
end
for j = i, #ARGV do redis.call('ZREM', KEYS[1], ARGV[j]) end
local base = ARGV[7]
if base == '' then return {0, 0} end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local free = limit - redis.call('ZCARD', KEYS[1])
local granted = math.max(0, math.min(need, free))
local extra = math.min(tonumber(ARGV[5]), free - granted - tonumber(ARGV[6]))
if extra > 0 then granted = granted + extra end
if granted > 0 then
  for n = 1, granted do redis.call('ZADD', KEYS[1], now + lease, base .. '.' .. n) end
  redis.call('PEXPIRE', KEYS[1], lease + window + 1000)
  return {granted, 0}
end
if need == 0 then return {0, 0} end
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
if oldest > now then return {0, -1} end
return {0, math.max(1, oldest + window - now)}
`;

/** Releases wait this long at most for the next call to carry them. */
export const RELEASE_FLUSH_MS = 50;

export interface RedisSlotsOptions {
  onError?: (error: unknown) => void;
  /** Longest a release waits for a call to carry it before it is sent alone. */
  flushMs?: number;
  /** Slots taken ahead (beyond the one a request needs) and kept for this process's next requests. */
  ahead?: number;
  /** Slots taken ahead only while more than this many stay free for the other processes. */
  reserve?: number;
  /** A slot taken ahead and unused for this long is handed back (an idle process holds no capacity). */
  holdMs?: number;
}

/** A release's ticket and when its answer arrived (performance.now()). */
type Answered = { ticket: Ticket; at: number };
/** A slot taken ahead and when it was granted (performance.now()). */
type Spare = { ticket: Ticket; at: number };
type SlotsCommand = (key: string, ...args: Array<string | number>) => Promise<[number, number]>;

/**
 * The slots in one Redis sorted set, shared by every process. Slots are taken a few at a time:
 * a request uses a slot taken ahead without any round trip, and taking it starts the next refill
 * in the background. Releases and handed-back slots ride on the next call (or go on their own
 * after `flushMs`); the script is loaded once and then run by its SHA.
 */
export class RedisSlots implements SlotStore {
  readonly kind = 'redis';
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;
  private answered: Answered[] = [];
  private unused: Spare[] = [];
  private readonly spares: Spare[] = [];
  private refilling = false;
  /** Slots asked ahead by calls still waiting for Redis: a burst of calls does not ask for `ahead` each. */
  private asking = 0;
  /** Set by flush (the platform closes): slots granted after it go straight back. */
  private closed = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private holdTimer: NodeJS.Timeout | null = null;
  private readonly run: SlotsCommand;
  private readonly onError: (error: unknown) => void;
  private readonly flushMs: number;
  private readonly ahead: number;
  private readonly reserve: number;
  private readonly holdMs: number;

  constructor(
    redis: Redis,
    private readonly key: string,
    private readonly limit: number,
    private readonly windowMs: number,
    /** Longest a request may hold a slot without releasing it (its timeout, plus a margin). */
    private readonly leaseMs: number,
    options: RedisSlotsOptions = {},
  ) {
    this.onError = options.onError ?? (() => undefined);
    this.flushMs = options.flushMs ?? RELEASE_FLUSH_MS;
    this.ahead = options.ahead ?? 0;
    this.reserve = options.reserve ?? 0;
    this.holdMs = options.holdMs ?? 250;
    const commands = redis as unknown as Record<string, SlotsCommand | undefined>;
    if (!commands.gameOutboundSlotsV2) {
      redis.defineCommand('gameOutboundSlotsV2', { numberOfKeys: 1, lua: SLOTS_SCRIPT });
    }
    const command = commands.gameOutboundSlotsV2 as SlotsCommand;
    this.run = (key, ...args) => command.call(redis, key, ...args);
  }

  /** Slots taken ahead and not yet used (for tests and diagnostics). */
  get spareCount(): number {
    return this.spares.length;
  }

  async tryTake(): Promise<TakeResult> {
    this.expireSpares();
    const spare = this.spares.shift();
    if (spare) {
      this.refill();
      return { ticket: spare.ticket };
    }
    const { tickets, waitMs } = await this.call(1);
    const [ticket, ...rest] = tickets;
    if (ticket === undefined) return { waitMs: waitMs < 0 ? POLL_MS : waitMs };
    this.keep(rest);
    return { ticket };
  }

  async release(ticket: Ticket): Promise<void> {
    this.answered.push({ ticket, at: performance.now() });
    this.scheduleFlush();
  }

  /** Sends the queued releases and hands back every slot taken ahead (the platform closes). */
  async flush(): Promise<void> {
    this.closed = true;
    this.unused.push(...this.spares.splice(0));
    await this.send();
  }

  /** One call: carries what is queued, asks for `need` slot(s) plus those taken ahead. */
  private async call(need: 0 | 1): Promise<{ tickets: Ticket[]; waitMs: number }> {
    this.counter += 1;
    const base = `${this.prefix}:${this.counter}`;
    const carried = this.takeQueued();
    const extra = Math.max(0, this.ahead - this.spares.length - this.asking);
    this.asking += extra;
    let granted: number;
    let waitMs: number;
    try {
      [granted, waitMs] = (
        await this.run(
          this.key,
          this.limit,
          this.windowMs,
          this.leaseMs,
          need,
          extra,
          this.reserve,
          base,
          ...carriedArgs(carried, performance.now()),
        )
      ).map(Number) as [number, number];
    } catch (error) {
      this.requeue(carried);
      // The reply is lost, not necessarily the call: whatever it may have granted goes back with the
      // next call (nothing is sent on those slots), instead of staying taken for the whole lease.
      const at = performance.now();
      for (let n = 1; n <= need + extra; n++) this.unused.push({ ticket: `${base}.${n}`, at });
      this.scheduleFlush();
      throw error;
    } finally {
      this.asking -= extra;
    }
    return { tickets: Array.from({ length: granted }, (_, n) => `${base}.${n + 1}`), waitMs };
  }

  /** Tops the spares up in the background once one is used; a failure only costs the next request a round trip. */
  private refill(): void {
    if (this.refilling || this.spares.length + this.asking >= this.ahead) return;
    this.refilling = true;
    this.call(0)
      .then(({ tickets }) => this.keep(tickets))
      .catch(this.onError)
      .finally(() => {
        this.refilling = false;
      });
  }

  private keep(tickets: readonly Ticket[]): void {
    const at = performance.now();
    for (const ticket of tickets) {
      // Never more than `ahead` kept: any beyond go back at once.
      if (this.spares.length < this.ahead) this.spares.push({ ticket, at });
      else {
        this.unused.push({ ticket, at });
        this.scheduleFlush();
      }
    }
    if (!this.closed) this.armHold();
    else if (tickets.length > 0) this.flush().catch(this.onError);
  }

  /** While spares are kept, looks at them every holdMs so an idle process hands them back. */
  private armHold(): void {
    if (this.holdTimer || this.spares.length === 0) return;
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.expireSpares();
      this.armHold();
    }, this.holdMs);
    this.holdTimer.unref();
  }

  /** Spares unused for holdMs go back with the next call (or on their own soon). */
  private expireSpares(): void {
    const since = performance.now() - this.holdMs;
    let stale = 0;
    while (stale < this.spares.length && (this.spares[stale]?.at ?? 0) <= since) stale += 1;
    if (stale === 0) return;
    this.unused.push(...this.spares.splice(0, stale));
    this.scheduleFlush();
  }

  private async send(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const carried = this.takeQueued();
    if (carried.answered.length === 0 && carried.unused.length === 0) return;
    try {
      await this.run(
        this.key,
        this.limit,
        this.windowMs,
        this.leaseMs,
        0,
        0,
        0,
        '',
        ...carriedArgs(carried, performance.now()),
      );
    } catch (error) {
      this.requeue(carried);
      throw error;
    }
  }

  /** What Redis did not apply goes with the next call, until those slots' lease has run out anyway. */
  private requeue(carried: Carried): void {
    const since = performance.now() - this.leaseMs;
    this.answered.unshift(...carried.answered.filter((a) => a.at > since));
    this.unused.unshift(...carried.unused.filter((s) => s.at > since));
    if (this.answered.length > 0 || this.unused.length > 0) this.scheduleFlush();
  }

  private takeQueued(): Carried {
    const carried = { answered: this.answered, unused: this.unused };
    this.answered = [];
    this.unused = [];
    return carried;
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.send().catch(this.onError);
    }, this.flushMs);
    this.flushTimer.unref();
  }
}

type Carried = { answered: Answered[]; unused: Spare[] };

/** The releases (ticket, whole ms since its answer, rounded down: never before it), then the unused slots. */
function carriedArgs(carried: Carried, now: number): Array<string | number> {
  return [
    carried.answered.length,
    ...carried.answered.flatMap(({ ticket, at }) => [ticket, Math.max(0, Math.floor(now - at))]),
    ...carried.unused.map((s) => s.ticket),
  ];
}
