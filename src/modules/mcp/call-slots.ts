import { AppError } from '../../core/errors.js';

/**
 * tools/call requests under way per account in this process: one account's slow tools cannot take
 * every worker of the server. A request past the bound is refused at once (429), not queued.
 */
export class CallSlots {
  private readonly held = new Map<string, number>();

  constructor(readonly perAccount: number) {}

  /**
   * `calls` slots at once (a JSON-RPC batch's tool calls all run together), or a 429; a batch of more
   * calls than the bound is a 400 whatever else runs, so no batch gets round it.
   */
  acquire(accountId: string, calls = 1): () => void {
    const mine = this.held.get(accountId) ?? 0;
    // Never possible, so not a 429 a client would retry: a 400 saying what to send instead.
    if (calls > this.perAccount)
      throw new AppError(
        'VALIDATION_ERROR',
        `The batch holds ${calls} MCP tool calls; at most ${this.perAccount} run at once for an account: send fewer per batch`,
        { limit: this.perAccount, calls },
      );
    if (mine + calls > this.perAccount)
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Too many MCP tool calls under way for this account (at most ${this.perAccount}); retry when one ends`,
        { limit: this.perAccount },
        { 'retry-after': '1' },
      );
    this.held.set(accountId, mine + calls);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(accountId) ?? calls) - calls;
      if (left > 0) this.held.set(accountId, left);
      else this.held.delete(accountId);
    };
  }

  open(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }
}

/** How many tool calls a JSON-RPC body (one message or a batch) asks for. */
export function toolCallsIn(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter(
    (m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call',
  ).length;
}
