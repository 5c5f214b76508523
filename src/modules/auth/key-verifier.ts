import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { ipMatcher } from '../../core/http/ip-rules.js';
import { hashKey, parseKey } from './key-format.js';
import type { AuthStore, KeyRow } from './store.js';

const INVALIDATION_CHANNEL = 'platform:keys:invalidate';
const LAST_USED_EVERY_MS = 60_000;

interface VerifiedKey {
  row: KeyRow;
  services: string[];
  scopes: string[];
  ipAllowed: ((ip: string) => boolean) | null;
}

export interface KeyVerifierOptions {
  store: AuthStore;
  clock: Clock;
  quotaFor(row: KeyRow): number;
  cacheTtlSeconds: number;
  cacheMax: number;
  redis: Redis | null;
  onError(error: unknown): void;
}

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);

/**
 * Verifies API keys. Verified keys are served from a bounded in-process cache; a change made
 * in this process drops them at once, other processes within the cache TTL, or at once over
 * Redis pub/sub when REDIS_URL is set.
 */
export class KeyVerifier {
  private readonly cache: LRUCache<string, VerifiedKey> | null;
  private readonly lastUsedWrites = new Map<string, number>();
  private subscriber: Redis | null = null;

  constructor(private readonly options: KeyVerifierOptions) {
    this.cache =
      options.cacheTtlSeconds > 0
        ? new LRUCache({ max: options.cacheMax, ttl: options.cacheTtlSeconds * 1000 })
        : null;
  }

  async start(): Promise<void> {
    if (!this.options.redis) return;
    this.subscriber = this.options.redis.duplicate();
    this.subscriber.on('message', (_channel, keyId: string) => this.dropLocal(keyId));
    this.subscriber.on('error', (error) => this.options.onError(error));
    await this.subscriber.subscribe(INVALIDATION_CHANNEL);
  }

  async stop(): Promise<void> {
    await this.subscriber?.quit().catch(() => undefined);
  }

  invalidate(keyId: string): void {
    this.dropLocal(keyId);
    this.options.redis?.publish(INVALIDATION_CHANNEL, keyId).catch((error) => this.options.onError(error));
  }

  private dropLocal(keyId: string): void {
    if (!this.cache) return;
    for (const [cacheKey, entry] of this.cache.entries())
      if (entry.row.id === keyId) this.cache.delete(cacheKey);
  }

  /** Checks a presented key value; throws 401 with the reason (never a guessing aid). */
  async verifyValue(value: string): Promise<VerifiedKey> {
    const parsed = parseKey(value);
    if (!parsed.ok) {
      throw unauthorized(parsed.reason === 'malformed' ? 'API key is malformed' : 'API key is invalid');
    }
    const hash = hashKey(value);
    const now = this.options.clock.now().toISOString();
    let entry = this.cache?.get(`h:${hash}`);
    if (!entry) {
      const row = await this.options.store.keyByHash(hash, now);
      if (!row) throw unauthorized('API key is invalid');
      entry = this.compile(row);
      this.cache?.set(`h:${hash}`, entry);
    }
    // The previous secret of a rotated key is honoured only through its grace period.
    if (entry.row.hash !== hash && !(entry.row.previous_expires_at && entry.row.previous_expires_at > now)) {
      this.cache?.delete(`h:${hash}`);
      throw unauthorized('API key is invalid');
    }
    this.assertUsable(entry.row, now);
    this.touch(entry.row.id);
    return entry;
  }

  /** The issuing key of a customer token, by id. */
  async verifyId(keyId: string): Promise<VerifiedKey> {
    let entry = this.cache?.get(`i:${keyId}`);
    if (!entry) {
      const row = await this.options.store.keyById(keyId);
      if (!row) throw unauthorized('Customer token is invalid');
      entry = this.compile(row);
      this.cache?.set(`i:${keyId}`, entry);
    }
    this.assertUsable(entry.row, this.options.clock.now().toISOString());
    return entry;
  }

  principalOf(entry: VerifiedKey): Principal {
    return {
      kind: 'api_key',
      accountId: entry.row.account_id,
      keyId: entry.row.id,
      keyType: entry.row.type,
      services: entry.services,
      role: entry.row.role,
      scopes: entry.scopes,
      customerId: null,
      dailyQuota: this.options.quotaFor(entry.row),
      ipAllowed: entry.ipAllowed,
    };
  }

  private assertUsable(row: KeyRow, now: string): void {
    if (row.revoked_at) throw unauthorized('API key has been revoked');
    if (row.expires_at <= now) throw unauthorized('API key has expired');
  }

  private compile(row: KeyRow): VerifiedKey {
    const ips = JSON.parse(row.allowed_ips) as string[];
    return {
      row,
      services: JSON.parse(row.services) as string[],
      scopes: JSON.parse(row.scopes) as string[],
      ipAllowed: ips.length > 0 ? ipMatcher(ips) : null,
    };
  }

  /** lastUsedAt is written at most once a minute per key, off the request path. */
  private touch(keyId: string): void {
    const nowMs = this.options.clock.now().getTime();
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (nowMs - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWrites.set(keyId, nowMs);
    this.options.store
      .updateKey(keyId, { last_used_at: new Date(nowMs).toISOString() })
      .catch((error) => this.options.onError(error));
  }
}
