import { LRUCache } from 'lru-cache';
import type { ChatEvent } from './types.js';

export interface CachedAnswer {
  /** The model that answered. */
  model: string;
  events: ChatEvent[];
}

/**
 * Exact-match answers of `stream:false`, temperature-0 chats (LLM_CACHE_TTL_SECONDS; off by default).
 * In process: each process warms its own, which keeps a cached answer from outliving a restart.
 */
export class AnswerCache {
  private readonly entries: LRUCache<string, CachedAnswer>;

  constructor(ttlSeconds: number, maxEntries: number) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlSeconds * 1000 });
  }

  get(key: string): CachedAnswer | undefined {
    return this.entries.get(key);
  }

  set(key: string, answer: CachedAnswer): void {
    this.entries.set(key, answer);
  }
}
