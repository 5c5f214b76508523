import { AppError } from '../../core/errors.js';

/**
 * tools/call requests under way per account in this process: one account's slow tools cannot take
 * every worker of the server. A request past the bound is refused at once (429), not queued.
 */
export class CallSlots {
  private readonly held = new Map<string, number>();

  constructor(readonly perAccount: number) {}

  acquire(accountId: string): () => void {
    const mine = this.held.get(accountId) ?? 0;
    if (mine >= this.perAccount)
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Too many MCP tool calls under way for this account (at most ${this.perAccount}); retry when one ends`,
        { limit: this.perAccount },
        { 'retry-after': '1' },
      );
    this.held.set(accountId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(accountId) ?? 1) - 1;
      if (left > 0) this.held.set(accountId, left);
      else this.held.delete(accountId);
    };
  }

  open(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }
}

/** Whether a JSON-RPC body (one message or a batch) asks for a tool call. */
export function callsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call',
  );
}
