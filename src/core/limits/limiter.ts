import { type Clock, nextUtcMidnight, utcDay } from '../clock.js';
import type { CounterStore } from './counter-store.js';

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

// Daily counters live two days so a late request near midnight never finds its counter gone.
const DAY_KEY_TTL_SECONDS = 2 * 86_400;

export class Limiter {
  constructor(
    private readonly store: CounterStore,
    private readonly clock: Clock,
  ) {}

  /** Counts one request against a key's quota for the current UTC day. */
  async dailyQuota(keyId: string, limit: number): Promise<LimitDecision> {
    const now = this.clock.now();
    const { count } = await this.store.hit(`quota:${keyId}:${utcDay(now)}`, DAY_KEY_TTL_SECONDS);
    const reset = nextUtcMidnight(now);
    return decide(count, limit, reset, Math.max(1, reset - Math.floor(now.getTime() / 1000)));
  }

  /** Counts one event in a short fixed window (per IP, per endpoint, failed logins). */
  async window(name: string, limit: number, windowSeconds: number): Promise<LimitDecision> {
    const now = this.clock.now();
    const { count, resetMs } = await this.store.hit(`win:${name}`, windowSeconds);
    const reset = Math.ceil((now.getTime() + resetMs) / 1000);
    return decide(count, limit, reset, Math.max(1, Math.ceil(resetMs / 1000)));
  }

  /** Reads a short window without counting. */
  async peekWindow(name: string, limit: number, windowSeconds: number): Promise<LimitDecision> {
    const now = this.clock.now();
    const current = await this.store.peek(`win:${name}`, windowSeconds);
    const count = current?.count ?? 0;
    const resetMs = current?.resetMs ?? windowSeconds * 1000;
    const reset = Math.ceil((now.getTime() + resetMs) / 1000);
    return { ...decide(count, limit, reset, Math.max(1, Math.ceil(resetMs / 1000))), allowed: count < limit };
  }
}

function decide(count: number, limit: number, reset: number, retryAfter: number): LimitDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset, retryAfter };
}
