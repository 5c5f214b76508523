import { type Clock, nextUtcMidnight, utcDay } from '../clock.js';
import type { CounterStep, CounterStore, WindowCount } from './counter-store.js';

/** What a limiter decided, with the numbers the `X-RateLimit-*` headers carry. */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
  /** Seconds to wait before retrying (for `Retry-After`). */
  retryAfter: number;
}

/** Tokens a call holds against its key's daily budget from `reserveTokens` to `settleTokens`. */
export interface TokenHold {
  keyId: string;
  /** The hold window (`HOLD_WINDOW_SECONDS` since the epoch) whose counter holds them. */
  slot: number;
  points: number;
  limit: number;
}

/** `reserveTokens`' answer: the decision, the hold when admitted, and whether holds refused it. */
export interface TokenReservation {
  decision: LimitDecision;
  hold: TokenHold | null;
  held: boolean;
}

/** A value now (in-process counters) or later (Redis). */
export type Maybe<T> = T | Promise<T>;

/** Applies `f` at once to a value that is there, or when a promised one arrives. */
export function andThen<T, R>(value: Maybe<T>, f: (value: T) => Maybe<R>): Maybe<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * One check of `Limiter.check`: a short window counted (`window`) or read (`readWindow`), a key's
 * daily request quota counted (`quota`) or read (`readQuota`). Each decides as the method of the
 * same name does.
 */
export type LimitCheck =
  | { kind: 'window'; name: string; limit: number; windowSeconds: number }
  | { kind: 'readWindow'; name: string; limit: number; windowSeconds: number }
  | { kind: 'quota' | 'readQuota'; keyId: string; limit: number };

// Daily counters live two days so a late request near midnight never finds its counter gone.
const DAY_KEY_TTL_SECONDS = 2 * 86_400;
const DAY_MS = 86_400_000;

export class Limiter {
  /** The UTC day of the last call, kept with its day number: formatting a date per request costs. */
  private day = { number: Number.NaN, text: '', resetSeconds: 0 };

  constructor(
    private readonly store: CounterStore,
    private readonly clock: Clock,
  ) {}

  /** Counts one request against a key's quota for the current UTC day. */
  async dailyQuota(keyId: string, limit: number): Promise<LimitDecision> {
    return this.hitDailyQuota(keyId, limit);
  }

  /** Counts one event in a short fixed window (per IP, per endpoint, failed logins). */
  async window(name: string, limit: number, windowSeconds: number): Promise<LimitDecision> {
    return this.hitWindow(name, limit, windowSeconds);
  }

  /** Reads a short window without counting. */
  async peekWindow(name: string, limit: number, windowSeconds: number): Promise<LimitDecision> {
    return this.readWindow(name, limit, windowSeconds);
  }

  /** As `dailyQuota`, answering without a promise when the counters are in-process. */
  hitDailyQuota(keyId: string, limit: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    return andThen(this.store.hit(`quota:${keyId}:${day.text}`, DAY_KEY_TTL_SECONDS), ({ count }) =>
      decide(count, limit, day.resetSeconds, Math.max(1, day.resetSeconds - Math.floor(nowMs / 1000))),
    );
  }

  /** Reads a key's quota for the current UTC day without counting (headers of a refused request). */
  readDailyQuota(keyId: string, limit: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    return andThen(this.store.peek(`quota:${keyId}:${day.text}`, DAY_KEY_TTL_SECONDS), (current) =>
      decide(
        current?.count ?? 0,
        limit,
        day.resetSeconds,
        Math.max(1, day.resetSeconds - Math.floor(nowMs / 1000)),
      ),
    );
  }

  /**
   * Reads a key's language-model tokens of the current UTC day against its budget, without
   * counting: `allowed` while the tokens charged today and held by calls in flight are fewer than
   * `limit`; `held` when holds made a refusal (charges alone are under the budget).
   */
  readTokenBudget(keyId: string, limit: number): Maybe<LimitDecision & { held: boolean }> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const slot = holdSlot(nowMs);
    const steps: CounterStep[] = [
      { op: 'peek', key: tokensKey(keyId, day.text), windowSeconds: DAY_KEY_TTL_SECONDS },
      ...holdPeeks(keyId, slot),
    ];
    return andThen(this.store.steps(steps), (counts) => {
      const used = counts.reduce((n, c) => n + countOf(c), 0);
      const decision = { ...dayDecision(used, limit, day.resetSeconds, nowMs), allowed: used < limit };
      return refusalWait(decision, counts, limit, nowMs);
    });
  }

  /**
   * Admits a call against a key's daily token budget and holds `points` tokens for it until
   * `settleTokens`: admitted while the tokens charged today and held by calls in flight are fewer
   * than `limit`, so calls made at once see each other's holds (one atomic call: peeks that stop at
   * the limit, then the hold). A refusal says whether holds made it (`held`): those end in seconds,
   * a spent day at midnight. Holds sit in windows of `HOLD_WINDOW_SECONDS`, apart from the day's
   * charges, and only the current window and the two before count: a hold never settled (its
   * process killed, or Redis gone between hold and settle) stops counting on its own.
   */
  reserveTokens(keyId: string, points: number, limit: number): Maybe<TokenReservation> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const slot = holdSlot(nowMs);
    // Never more than the budget: a hold past it admits nothing more, and a `max_tokens` of 1e300
    // would not be a whole number to Redis (nor survive a float sum in process).
    const held = Math.min(limit, Math.max(1, Number.isFinite(points) ? Math.ceil(points) : limit));
    const steps: CounterStep[] = [
      { op: 'peek', key: tokensKey(keyId, day.text), windowSeconds: DAY_KEY_TTL_SECONDS, stopAtTotal: limit },
      ...holdPeeks(keyId, slot).map((step) => ({ ...step, stopAtTotal: limit })),
      { op: 'hit', key: heldKey(keyId, slot), windowSeconds: HOLD_KEY_TTL_SECONDS, points: held },
    ];
    return andThen(this.store.steps(steps), (counts) => {
      if (counts.length === steps.length) {
        // The hit's count already has the current window's earlier holds in it (its peek, step 1).
        const used = counts.reduce((n, c) => n + countOf(c), 0) - countOf(counts[1]);
        return {
          decision: dayDecision(used, limit, day.resetSeconds, nowMs),
          hold: { keyId, slot, points: held, limit },
          held: false,
        };
      }
      const used = counts.reduce((n, c) => n + countOf(c), 0);
      const refused = { ...dayDecision(used, limit, day.resetSeconds, nowMs), allowed: false };
      const { held: byHolds, ...decision } = refusalWait(refused, counts, limit, nowMs);
      return { decision, hold: null, held: byHolds };
    });
  }

  /**
   * Ends a hold of `reserveTokens`: the hold goes from its window (unless that window no longer
   * counts) and the call's `tokens` (prompt + completion; 0 when it failed before any) are charged
   * to the current UTC day, so a call that ran past midnight counts on the new day.
   */
  settleTokens(hold: TokenHold, tokens: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const slot = holdSlot(nowMs);
    const points = Number.isFinite(tokens) && tokens > 0 ? Math.min(MAX_CHARGE, Math.ceil(tokens)) : 0;
    const steps: CounterStep[] = [];
    if (hold.slot >= slot - (HOLD_WINDOWS - 1))
      steps.push({
        op: 'hit',
        key: heldKey(hold.keyId, hold.slot),
        windowSeconds: HOLD_KEY_TTL_SECONDS,
        points: -hold.points,
      });
    const charge = steps.length;
    steps.push(
      { op: 'hit', key: tokensKey(hold.keyId, day.text), windowSeconds: DAY_KEY_TTL_SECONDS, points },
      ...holdPeeks(hold.keyId, slot),
    );
    return andThen(this.store.steps(steps), (counts) => {
      const used = counts.slice(charge).reduce((n, c) => n + countOf(c), 0);
      return dayDecision(used, hold.limit, day.resetSeconds, nowMs);
    });
  }

  /** As `window`, answering without a promise when the counters are in-process. */
  hitWindow(name: string, limit: number, windowSeconds: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    return andThen(this.store.hit(`win:${name}`, windowSeconds), ({ count, resetMs }) =>
      decide(count, limit, Math.ceil((nowMs + resetMs) / 1000), Math.max(1, Math.ceil(resetMs / 1000))),
    );
  }

  /** As `peekWindow`, answering without a promise when the counters are in-process. */
  readWindow(name: string, limit: number, windowSeconds: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    return andThen(this.store.peek(`win:${name}`, windowSeconds), (current) =>
      windowRead(current, limit, windowSeconds, nowMs),
    );
  }

  /**
   * Several checks in order as one call to the counters (one round trip to Redis), stopping after
   * the first refused one, as calling them one after the other and stopping at a refusal would:
   * the decisions of the checks made, the refused one last.
   */
  check(checks: readonly LimitCheck[]): Maybe<LimitDecision[]> {
    if (checks.length === 0) return [];
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const steps: CounterStep[] = checks.map((c) => {
      if (c.kind === 'window')
        return { op: 'hit', key: `win:${c.name}`, windowSeconds: c.windowSeconds, stopAt: c.limit + 1 };
      if (c.kind === 'readWindow')
        return { op: 'peek', key: `win:${c.name}`, windowSeconds: c.windowSeconds, stopAt: c.limit };
      const key = `quota:${c.keyId}:${day.text}`;
      return c.kind === 'quota'
        ? { op: 'hit', key, windowSeconds: DAY_KEY_TTL_SECONDS, stopAt: c.limit + 1 }
        : { op: 'peek', key, windowSeconds: DAY_KEY_TTL_SECONDS };
    });
    return andThen(this.store.steps(steps), (counts) =>
      counts.map((current, i) => {
        const c = checks[i] as LimitCheck;
        if (c.kind === 'window') {
          const { count, resetMs } = current as WindowCount;
          return decide(
            count,
            c.limit,
            Math.ceil((nowMs + resetMs) / 1000),
            Math.max(1, Math.ceil(resetMs / 1000)),
          );
        }
        if (c.kind === 'readWindow') return windowRead(current, c.limit, c.windowSeconds, nowMs);
        return dayDecision(current?.count ?? 0, c.limit, day.resetSeconds, nowMs);
      }),
    );
  }

  private dayOf(nowMs: number) {
    const number = Math.floor(nowMs / DAY_MS);
    if (number !== this.day.number) {
      const date = new Date(nowMs);
      this.day = { number, text: utcDay(date), resetSeconds: nextUtcMidnight(date) };
    }
    return this.day;
  }
}

/** A short window read without counting: allowed while fewer than `limit` are counted. */
function windowRead(
  current: WindowCount | null,
  limit: number,
  windowSeconds: number,
  nowMs: number,
): LimitDecision {
  const count = current?.count ?? 0;
  const resetMs = current?.resetMs ?? windowSeconds * 1000;
  const reset = Math.ceil((nowMs + resetMs) / 1000);
  return { ...decide(count, limit, reset, Math.max(1, Math.ceil(resetMs / 1000))), allowed: count < limit };
}

const tokensKey = (keyId: string, day: string) => `tokens:${keyId}:${day}`;

/**
 * Holds of calls in flight are counted in windows of this many seconds, apart from the day's
 * charges; the current window and the two before count, so a hold counts for 30 to 45 minutes
 * unless its call settles first. A call longer than that keeps running, its hold no longer seen.
 */
const HOLD_WINDOW_SECONDS = 900;
/** Hold windows that count: the current one and the ones before it. */
const HOLD_WINDOWS = 3;
/**
 * A window's counter lives as long as it counts (through the two windows after its own), and a
 * minute more for processes whose clocks differ.
 */
const HOLD_KEY_TTL_SECONDS = HOLD_WINDOWS * HOLD_WINDOW_SECONDS + 60;

const holdSlot = (nowMs: number) => Math.floor(nowMs / 1000 / HOLD_WINDOW_SECONDS);
const heldKey = (keyId: string, slot: number) => `tokens-held:${keyId}:${slot}`;

/**
 * Peeks of the hold windows that count, newest first: `slot`'s own, the next one (a process whose
 * clock runs ahead holds there near a window's end), then the two before. Steps stop where their
 * total reaches a budget, so the newest are always read: `refusalWait` tells fresh holds from old.
 */
function holdPeeks(keyId: string, slot: number): CounterStep[] {
  return [slot, slot + 1, slot - 1, slot - 2].map((s) => ({
    op: 'peek',
    key: heldKey(keyId, s),
    windowSeconds: HOLD_KEY_TTL_SECONDS,
  }));
}

/** A step's count; a window that is not open counts nothing. */
const countOf = (count: WindowCount | null | undefined) => Math.max(0, count?.count ?? 0);

/**
 * A refusal's wait, from its steps' counts (the day's charges, then `holdPeeks`): a spent day ends at
 * midnight; holds of this window or the next (calls in flight) end as their calls do, in seconds;
 * holds only older windows make the refusal are calls past 15 minutes or holds never settled, which
 * stop counting as the oldest window does, at the end of this one.
 */
function refusalWait<D extends LimitDecision>(
  decision: D,
  counts: ReadonlyArray<WindowCount | null | undefined>,
  limit: number,
  nowMs: number,
): D & { held: boolean } {
  const charged = countOf(counts[0]);
  if (decision.allowed || charged >= limit) return { ...decision, held: false };
  const fresh = charged + countOf(counts[1]) + countOf(counts[2]);
  if (fresh >= limit) return { ...decision, retryAfter: HELD_RETRY_SECONDS, held: true };
  const windowEndsMs = (holdSlot(nowMs) + 1) * HOLD_WINDOW_SECONDS * 1000;
  return { ...decision, retryAfter: Math.max(1, Math.ceil((windowEndsMs - nowMs) / 1000)), held: true };
}

/** The most one call is charged: usage an upstream reports past it is not a count (Redis counts in 64 bits). */
const MAX_CHARGE = 1e12;

/** A refusal made by holds of calls in flight: they end as those calls do. */
const HELD_RETRY_SECONDS = 1;

/** A decision on a counter of the UTC day that ends at `resetSeconds`. */
function dayDecision(count: number, limit: number, resetSeconds: number, nowMs: number): LimitDecision {
  return decide(count, limit, resetSeconds, Math.max(1, resetSeconds - Math.floor(nowMs / 1000)));
}

function decide(count: number, limit: number, reset: number, retryAfter: number): LimitDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset, retryAfter };
}
