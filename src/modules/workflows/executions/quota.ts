import { type Clock, nextUtcMidnight, utcDay } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import type { ExecutionCountStore } from './count-store.js';
import type { Log } from './log.js';

export interface ExecutionQuotaSettings {
  /** Executions per account per UTC day (0: no quota). */
  daily: number;
  /** Per-account replacements of `daily` (0: none for that account). */
  byAccount: Record<string, number>;
}

/** The 429 of a spent daily execution quota: `Retry-After` until the UTC day turns. */
function quotaExceeded(limit: number, now: Date, mode: string): AppError {
  const reset = nextUtcMidnight(now);
  const retryAfter = Math.max(1, reset - Math.floor(now.getTime() / 1000));
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `The account's daily execution quota of ${limit} is spent; retry after ${retryAfter} s (the next UTC day)`,
    { limit, reset, quota: 'daily-executions', mode },
    { 'retry-after': String(retryAfter) },
  );
}

/**
 * The daily execution quota of each account. Every new execution is counted (webhook, manual, API
 * retry, schedule, error workflow, sub-workflow waited or queued, flow, agent); a resume of a
 * waiting one is not new. Over the quota, the start is refused with the platform's 429.
 */
export class ExecutionQuota {
  /** The day whose older counters were last dropped (database counters; Redis keys expire). */
  private prunedBefore = '';

  constructor(
    private readonly store: ExecutionCountStore,
    private readonly settings: ExecutionQuotaSettings,
    private readonly clock: Clock,
    private readonly log: Log,
  ) {}

  limitOf(accountId: string): number {
    return this.settings.byAccount[accountId] ?? this.settings.daily;
  }

  /** Counts one execution of the account today, or throws the 429 when the quota is spent. */
  async admit(accountId: string, mode: string): Promise<void> {
    const limit = this.limitOf(accountId);
    if (limit <= 0) return;
    const now = this.clock.now();
    const day = utcDay(now);
    if (day !== this.prunedBefore && this.store.prune) {
      this.prunedBefore = day;
      // Yesterday's counters stay: a start just before midnight may still be counting.
      const yesterday = utcDay(new Date(now.getTime() - 86_400_000));
      await this.store
        .prune(yesterday)
        .catch((err: unknown) => this.log.warn({ err }, 'execution counters not pruned'));
    }
    if ((await this.store.take(accountId, day, limit)) !== null) return;
    // Not logged here: a caller gets the 429, and the starters without one (schedules, error
    // workflows) log the refusal with what they were starting.
    throw quotaExceeded(limit, now, mode);
  }

  /** Today's use and limit (0: none). */
  async usage(accountId: string): Promise<{ used: number; limit: number }> {
    return {
      used: await this.store.read(accountId, utcDay(this.clock.now())),
      limit: this.limitOf(accountId),
    };
  }
}
