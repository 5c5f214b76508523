import { LRUCache } from 'lru-cache';

/** A credential as a running workflow receives it: its type and clear data. */
export interface Revealed {
  type: string;
  data: Record<string, string>;
}

/**
 * Decrypted credentials of running workflows, in this process's memory only (never written
 * anywhere), so a webhook → database flow does not read, check and decrypt its credential on every
 * execution. Bounded in count and age: a change made by another process (update, delete, share,
 * transfer, a workflow saved by someone else) takes effect here within `ttlMs`; one made in this
 * process drops the account's entries at once.
 */
export class RevealCache {
  private readonly entries: LRUCache<string, Revealed> | null;

  constructor(options: { max: number; ttlMs: number }) {
    this.entries = options.ttlMs > 0 ? new LRUCache({ max: options.max, ttl: options.ttlMs }) : null;
  }

  /** A copy of the cached data (a node that changes it must not change the next run's). */
  get(accountId: string, ref: string, workflowId: string): Revealed | undefined {
    const found = this.entries?.get(keyOf(accountId, ref, workflowId));
    return found ? { type: found.type, data: { ...found.data } } : undefined;
  }

  set(accountId: string, ref: string, workflowId: string, value: Revealed): void {
    this.entries?.set(keyOf(accountId, ref, workflowId), { type: value.type, data: { ...value.data } });
  }

  /** Drops every entry of the account: any credential or workflow of it changed. */
  forgetAccount(accountId: string): void {
    if (!this.entries) return;
    const prefix = `${accountId}\0`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

const keyOf = (accountId: string, ref: string, workflowId: string) => `${accountId}\0${ref}\0${workflowId}`;
