import { AppError } from '../../core/errors.js';
import type { LimitDecision } from '../../core/limits/limiter.js';

/** A key's daily token budget in OpenAI's header names, beside the platform's request-quota headers. */
export function budgetHeaders(decision: LimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(decision.limit),
    'x-ratelimit-remaining-tokens': String(Math.max(0, decision.remaining)),
    'x-ratelimit-reset-tokens': String(decision.reset),
  };
}

/** The 429 of a spent budget: `Retry-After` until the UTC day turns. */
export function budgetExceeded(decision: LimitDecision): AppError {
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Daily token budget of ${decision.limit} exceeded; retry after ${decision.retryAfter} s`,
    { tokenBudget: decision.limit, reset: decision.reset },
    { 'retry-after': String(decision.retryAfter), ...budgetHeaders(decision) },
  );
}
