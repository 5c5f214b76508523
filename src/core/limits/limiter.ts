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
  /** The UTC day of the counter that holds them. */
  day: string;
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
   * counting: `allowed` while fewer than `limit` are used (a request may start; it is charged
   * when its token count is known).
   */
  readTokenBudget(keyId: string, limit: number): Maybe<LimitDecision & { held: boolean }> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    return andThen(this.store.peek(tokensKey(keyId, day.text), DAY_KEY_TTL_SECONDS), (current) => {
      const used = current?.count ?? 0;
      const decision = { ...dayDecision(used, limit, day.resetSeconds, nowMs), allowed: used < limit };
      if (decision.allowed) return { ...decision, held: false };
      return andThen(this.heldRefusal(keyId, day.text, used, limit, decision), (r) => ({
        ...r.decision,
        held: r.held,
      }));
    });
  }

  /** A refusal at `count` (charged + held): made by holds of calls in flight, or by a spent day. */
  private heldRefusal(
    keyId: string,
    day: string,
    count: number,
    limit: number,
    refused: LimitDecision,
  ): Maybe<{ decision: LimitDecision; held: boolean }> {
    return andThen(this.store.peek(heldKey(keyId, day), DAY_KEY_TTL_SECONDS), (holds) => {
      const inFlight = holds?.count ?? 0;
      if (inFlight <= 0 || count - inFlight >= limit) return { decision: refused, held: false };
      return { decision: { ...refused, retryAfter: HELD_RETRY_SECONDS }, held: true };
    });
  }

  /**
   * Admits a call against a key's daily token budget and holds `points` tokens for it until
   * `settleTokens`: admitted while the tokens charged and held today are fewer than `limit`, so
   * calls made at once see each other's holds (one atomic call: a peek that stops at the limit,
   * then the hold). A refusal says whether holds of calls in flight made it (`held`): those end
   * in seconds, a spent day at midnight.
   */
  reserveTokens(keyId: string, points: number, limit: number): Maybe<TokenReservation> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const key = tokensKey(keyId, day.text);
    // Never more than the budget: a hold past it admits nothing more, and a `max_tokens` of 1e300
    // would not be a whole number to Redis (nor survive a float sum in process).
    const held = Math.min(limit, Math.max(1, Number.isFinite(points) ? Math.ceil(points) : limit));
    const steps: CounterStep[] = [
      { op: 'peek', key, windowSeconds: DAY_KEY_TTL_SECONDS, stopAt: limit },
      { op: 'hit', key, windowSeconds: DAY_KEY_TTL_SECONDS, points: held },
      { op: 'hit', key: heldKey(keyId, day.text), windowSeconds: DAY_KEY_TTL_SECONDS, points: held },
    ];
    return andThen(this.store.steps(steps), (counts) => {
      if (counts.length > 1) {
        const count = counts[1]?.count ?? held;
        return {
          decision: dayDecision(count, limit, day.resetSeconds, nowMs),
          hold: { keyId, day: day.text, points: held, limit },
          held: false,
        };
      }
      const count = counts[0]?.count ?? 0;
      const refused = { ...dayDecision(count, limit, day.resetSeconds, nowMs), allowed: false };
      return andThen(this.heldRefusal(keyId, day.text, count, limit, refused), (r) => ({ ...r, hold: null }));
    });
  }

  /**
   * Ends a hold of `reserveTokens`: the call's `tokens` (prompt + completion; 0 when it failed before
   * any) replace the tokens held, on the day the hold was taken; a call that ran past midnight is
   * charged to the new day.
   */
  settleTokens(hold: TokenHold, tokens: number): Maybe<LimitDecision> {
    const nowMs = this.clock.now().getTime();
    const day = this.dayOf(nowMs);
    const points = Number.isFinite(tokens) && tokens > 0 ? Math.min(MAX_CHARGE, Math.ceil(tokens)) : 0;
    const release = -hold.points;
    const steps: CounterStep[] = [
      { op: 'hit', key: heldKey(hold.keyId, hold.day), windowSeconds: DAY_KEY_TTL_SECONDS, points: release },
    ];
    if (hold.day === day.text)
      steps.push({
        op: 'hit',
        key: tokensKey(hold.keyId, day.text),
        windowSeconds: DAY_KEY_TTL_SECONDS,
        points: points + release,
      });
    else
      steps.push(
        {
          op: 'hit',
          key: tokensKey(hold.keyId, hold.day),
          windowSeconds: DAY_KEY_TTL_SECONDS,
          points: release,
        },
        { op: 'hit', key: tokensKey(hold.keyId, day.text), windowSeconds: DAY_KEY_TTL_SECONDS, points },
      );
    return andThen(this.store.steps(steps), (counts) =>
      dayDecision(counts[counts.length - 1]?.count ?? 0, hold.limit, day.resetSeconds, nowMs),
    );
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
/** The part of a key's day counter held by calls in flight (`reserveTokens`), apart to tell a refusal's wait. */
const heldKey = (keyId: string, day: string) => `tokens-held:${keyId}:${day}`;

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
