import type { Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import type { LimitDecision, Limiter, TokenHold } from '../../core/limits/limiter.js';
import type { ChatRequest } from './types.js';

/** A key's daily token budget in OpenAI's header names, beside the platform's request-quota headers. */
export function budgetHeaders(decision: LimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(decision.limit),
    'x-ratelimit-remaining-tokens': String(Math.max(0, decision.remaining)),
    'x-ratelimit-reset-tokens': String(decision.reset),
  };
}

/**
 * The 429 of a budget: spent (`Retry-After` until the UTC day turns), or held by the key's calls in
 * flight (`held`: retry in a second, when they have ended and given back what they did not use).
 */
export function budgetExceeded(decision: LimitDecision, held = false): AppError {
  const why = held ? 'is held by calls in flight' : 'exceeded';
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Daily token budget of ${decision.limit} ${why}; retry after ${decision.retryAfter} s`,
    { tokenBudget: decision.limit, reset: decision.reset, ...(held ? { heldByCallsInFlight: true } : {}) },
    { 'retry-after': String(decision.retryAfter), ...budgetHeaders(decision) },
  );
}

/**
 * Completion tokens a chat holds when it names no `max_tokens`. OpenAI's rate limits count a
 * request's `max_tokens` at admission in the same way; an answer longer than this overshoots the
 * budget by the difference, as every call that ends after the budget is reached does.
 */
export const DEFAULT_COMPLETION_HOLD = 1_024;

/** Tokens an image holds at admission (OpenAI counts 85–1,105 for one, by size and detail). */
const IMAGE_HOLD = 1_105;

/**
 * Tokens a text may be at most, for a hold: a third of its UTF-8 bytes. Byte-level BPE tokenizers
 * make about one token of four bytes of English and one of three of CJK (a character each): a hold
 * should be over, not under, what the call will be charged.
 */
const textHold = (text: string) => Math.ceil(Buffer.byteLength(text) / 3);

/**
 * What a chat holds at admission: everything it sends the model (messages, their tool calls, files
 * and images, the tools' schemas) and its answers' room.
 */
export function chatHold(request: Omit<ChatRequest, 'model'>): number {
  let tokens = 0;
  for (const message of request.messages) {
    tokens += textHold(message.content);
    if (message.images) tokens += message.images.length * IMAGE_HOLD;
    // A file's tokens are its text's, read from its bytes (base64: three bytes in four characters).
    if (message.files) for (const file of message.files) tokens += Math.ceil(file.data.length / 4);
    if (message.toolCalls) tokens += textHold(JSON.stringify(message.toolCalls));
    if (message.thinking) tokens += textHold(message.thinking);
  }
  if (request.tools) tokens += textHold(JSON.stringify(request.tools));
  const answer = request.options.maxTokens ?? DEFAULT_COMPLETION_HOLD;
  return tokens + answer * (request.n ?? 1);
}

/** What an embedding call holds: its input's tokens (given as token arrays, or a third per UTF-8 byte). */
export function embedHold(input: readonly string[], tokens?: readonly (readonly number[])[]): number {
  if (tokens) return tokens.reduce((n, t) => n + t.length, 0);
  let held = 0;
  for (const text of input) held += textHold(text);
  return held;
}

/**
 * A call's share of its key's token budget, from admission to its end: `settle` gives back the hold
 * and charges what the call used, once, whichever way the call ends.
 */
export class CallBudget {
  private hold: TokenHold | null;

  constructor(
    private readonly limiter: Limiter | null,
    hold: TokenHold | null,
    readonly headers: Record<string, string>,
  ) {
    this.hold = hold;
  }

  /**
   * Runs the call that holds this budget: if it fails, the hold goes back. Settling is once, so a call
   * that ended well (or handed the budget on to its stream) keeps the charge it made or will make.
   */
  async during<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      void this.settle(0).catch(() => {});
      throw error;
    }
  }

  async settle(tokens: number): Promise<void> {
    const hold = this.hold;
    if (!hold || !this.limiter) return;
    this.hold = null;
    await this.limiter.settleTokens(hold, tokens);
  }
}

/** The budget of a call whose key has none (shared: nothing to hold or give back). */
export const NO_BUDGET = new CallBudget(null, null, {});

/**
 * Admits a call against its key's budget, holding `points()` tokens (worked out only for a key that
 * has a budget); throws the budget's 429.
 */
export async function holdBudget(
  limiter: Limiter,
  principal: Principal,
  points: () => number,
): Promise<CallBudget> {
  const budget = principal.dailyTokenBudget;
  if (!principal.keyId || budget === null || budget === undefined) return NO_BUDGET;
  const reservation = await limiter.reserveTokens(principal.keyId, points(), budget);
  if (!reservation.hold) throw budgetExceeded(reservation.decision, reservation.held);
  return new CallBudget(limiter, reservation.hold, budgetHeaders(reservation.decision));
}
