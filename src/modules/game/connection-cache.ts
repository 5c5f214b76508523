import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../../core/secrets.js';
import type { ConnectionRow, GameStore, Owner } from './store.js';

interface ConnectionCacheOptions {
  store: GameStore;
  box: SecretBox;
  /** How long a connection (or its absence) is served without reading the database; 0: never. */
  ttlMs: number;
  max: number;
  now: () => number;
  redis: Redis | null;
  /** The pub/sub channel every process listens on (under REDIS_PREFIX). */
  channel: string;
  onError(error: unknown): void;
}

interface Entry {
  /** undefined: the owner has no connection (the answer of most calls of a key without one). */
  conn: ConnectionRow | undefined;
  /** The access token of `conn`, decrypted once. */
  accessToken: string | null;
}

const ownerKey = (owner: Owner) => `${owner.accountId}\u0000${owner.customerId}`;

/**
 * Each owner's game connection and its decrypted access token, served from a bounded
 * in-process cache so a proxied call costs no database read and no decryption. An entry lives
 * at most `ttlMs` and never past its access token's expiry. Every change (connect, renewal,
 * expiry, disconnect) drops it here at once and in the other processes over Redis pub/sub,
 * as the API key cache does; without Redis, other processes see it within `ttlMs`.
 */
export class ConnectionCache {
  private readonly entries: LRUCache<string, Entry>;
  /** Bumped by every invalidation: a read that raced one does not fill the cache. */
  private generation = 0;
  private subscriber: Redis | null = null;

  constructor(private readonly options: ConnectionCacheOptions) {
    this.entries = new LRUCache<string, Entry>({ max: options.max, ttl: options.ttlMs });
  }

  async start(): Promise<void> {
    if (!this.options.redis) return;
    this.subscriber = this.options.redis.duplicate();
    this.subscriber.on('message', (_channel, key: string) => this.dropLocal(key));
    this.subscriber.on('error', (error) => this.options.onError(error));
    await this.subscriber.subscribe(this.options.channel);
  }

  async stop(): Promise<void> {
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
  }

  /** The owner's connection row, from the cache or the database. */
  async connectionOf(owner: Owner): Promise<ConnectionRow | undefined> {
    const key = ownerKey(owner);
    const hit = this.entries.get(key);
    if (hit) return hit.conn;
    const generation = this.generation;
    const conn = await this.options.store.connectionOf(owner);
    if (generation === this.generation && this.options.ttlMs > 0) {
      const ttl = conn ? Date.parse(conn.access_expires_at) - this.options.now() : this.options.ttlMs;
      if (ttl > 0) {
        this.entries.set(key, { conn, accessToken: null }, { ttl: Math.min(ttl, this.options.ttlMs) });
      }
    }
    return conn;
  }

  /** The decrypted access token of a row: decrypted once while the row is the cached one. */
  accessToken(owner: Owner, conn: ConnectionRow): string {
    const entry = this.entries.get(ownerKey(owner));
    if (entry?.conn === conn && entry.accessToken !== null) return entry.accessToken;
    const token = this.options.box.decrypt(conn.access_token);
    if (entry?.conn === conn) entry.accessToken = token;
    return token;
  }

  /** The cached row turned out stale (changed by a process we did not hear from): dropped here. */
  forget(owner: Owner): void {
    this.dropLocal(ownerKey(owner));
  }

  /** The owner's connection changed: dropped here and, over Redis, in every other process. */
  changed(owner: Owner): void {
    const key = ownerKey(owner);
    this.dropLocal(key);
    this.options.redis?.publish(this.options.channel, key).catch((error) => this.options.onError(error));
  }

  private dropLocal(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }
}
