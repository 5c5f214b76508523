import { createHash, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { modelsOf, type Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { ipMatcher } from '../../core/http/ip-rules.js';
import { hashKey, parseKey } from './key-format.js';
import type { AuthStore, KeyRow } from './store.js';

const LAST_USED_EVERY_MS = 60_000;
/**
 * A presented key is looked up by its leading characters (the type prefix and 8 characters of
 * the random body, ~48 bits) and the whole value is then compared in constant time: the look-up
 * can only ever time the selector, never the ~140 bits after it (the split-token pattern).
 */
const VERIFIER_LENGTH = 30;

export interface VerifiedKey {
  readonly row: KeyRow;
  readonly services: string[];
  readonly scopes: string[];
  readonly ipAllowed: ((ip: string) => boolean) | null;
  /** expires_at in epoch milliseconds, so a cache hit checks expiry without formatting dates. */
  readonly expiresAtMs: number;
  /** Built once per verified row: every field derives from the row and the configuration. */
  readonly principal: Principal;
  /**
   * Names the key's current value without revealing it: customer tokens carry it, so a token
   * dies as soon as the key is rotated (or its value otherwise replaced).
   */
  readonly tokenBinding: string;
}

/** A key value verified once (shape, checksum and hash), cached by its selector. */
interface PresentedKey {
  readonly entry: VerifiedKey;
  /** The entry's principal, or for a previous value in its grace period one that says when it ends. */
  readonly principal: Principal;
  readonly value: Buffer;
  /** The previous secret of a rotated key is honoured until then; the current one forever. */
  readonly graceUntilMs: number;
}

interface KeyVerifierOptions {
  store: AuthStore;
  clock: Clock;
  quotaFor(row: KeyRow): number;
  cacheTtlSeconds: number;
  cacheMax: number;
  redis: Redis | null;
  /** Prefix of the Redis pub/sub channel (REDIS_PREFIX), so platforms sharing a Redis stay apart. */
  redisPrefix?: string;
  onError(error: unknown): void;
  /** Told once lastUsedAt of a key has been written (after the write). */
  onTouched?(keyId: string): void;
}

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);

/**
 * Verifies API keys. Verified keys are served from a bounded in-process cache; a change made
 * in this process drops them at once, other processes within the cache TTL, or at once over
 * Redis pub/sub when REDIS_URL is set. A cache hit costs one map look-up and one constant-time
 * comparison: the checksum and hash were checked when the value was first verified.
 */
export class KeyVerifier {
  /** Presented values by selector. */
  private readonly presented: LRUCache<string, PresentedKey> | null;
  /** Issuing keys of customer tokens, by key id. */
  private readonly byId: LRUCache<string, VerifiedKey> | null;
  private readonly lastUsedWrites = new Map<string, number>();
  /** Bumped by every invalidation: a look-up that raced one does not fill the cache. */
  private generation = 0;
  private subscriber: Redis | null = null;
  private readonly channel: string;

  constructor(private readonly options: KeyVerifierOptions) {
    this.channel = `${options.redisPrefix ?? 'platform:'}keys:invalidate`;
    const enabled = options.cacheTtlSeconds > 0;
    const cacheOptions = { max: options.cacheMax, ttl: options.cacheTtlSeconds * 1000 };
    this.presented = enabled ? new LRUCache<string, PresentedKey>(cacheOptions) : null;
    this.byId = enabled ? new LRUCache<string, VerifiedKey>(cacheOptions) : null;
  }

  async start(): Promise<void> {
    if (!this.options.redis) return;
    this.subscriber = this.options.redis.duplicate();
    this.subscriber.on('message', (_channel, keyId: string) => this.dropLocal(keyId));
    this.subscriber.on('error', (error) => this.options.onError(error));
    await this.subscriber.subscribe(this.channel);
  }

  async stop(): Promise<void> {
    await this.subscriber?.quit().catch(() => undefined);
  }

  invalidate(keyId: string): void {
    this.dropLocal(keyId);
    this.options.redis?.publish(this.channel, keyId).catch((error) => this.options.onError(error));
  }

  private dropLocal(keyId: string): void {
    this.generation++;
    if (this.presented)
      for (const [selector, p] of this.presented.entries())
        if (p.entry.row.id === keyId) this.presented.delete(selector);
    this.byId?.delete(keyId);
  }

  /**
   * A presented value already verified in this process, checked for grace period, revocation
   * and expiry (throws 401); undefined when it must be verified in full.
   */
  cached(value: string): Principal | undefined {
    const p = this.presented?.get(selectorOf(value));
    if (!p) return undefined;
    const bytes = Buffer.from(value);
    if (bytes.length !== p.value.length || !timingSafeEqual(bytes, p.value)) return undefined;
    const nowMs = this.options.clock.now().getTime();
    if (p.graceUntilMs <= nowMs) {
      this.presented?.delete(selectorOf(value));
      throw unauthorized('API key is invalid');
    }
    this.assertUsable(p.entry, nowMs);
    this.touch(p.entry.row.id, nowMs);
    return p.principal;
  }

  /** Checks a presented key value; throws 401 with the reason (never a guessing aid). */
  async verifyValue(value: string): Promise<Principal> {
    return this.cached(value) ?? this.verifyInFull(value);
  }

  private async verifyInFull(value: string): Promise<Principal> {
    const parsed = parseKey(value);
    if (!parsed.ok) {
      throw unauthorized(parsed.reason === 'malformed' ? 'API key is malformed' : 'API key is invalid');
    }
    const hash = hashKey(value);
    const generation = this.generation;
    const nowMs = this.options.clock.now().getTime();
    const row = await this.options.store.keyByHash(hash, new Date(nowMs).toISOString());
    if (!row) throw unauthorized('API key is invalid');
    // The previous secret of a rotated key is honoured only through its grace period.
    const graceUntilMs =
      row.hash === hash
        ? Number.POSITIVE_INFINITY
        : row.previous_expires_at
          ? Date.parse(row.previous_expires_at)
          : Number.NEGATIVE_INFINITY;
    if (graceUntilMs <= nowMs) throw unauthorized('API key is invalid');
    const entry = this.compile(row);
    const principal = Number.isFinite(graceUntilMs)
      ? Object.freeze({ ...entry.principal, credentialEndsAtMs: graceUntilMs })
      : entry.principal;
    if (generation === this.generation)
      this.presented?.set(selectorOf(value), { entry, principal, value: Buffer.from(value), graceUntilMs });
    this.assertUsable(entry, nowMs);
    this.touch(row.id, nowMs);
    return principal;
  }

  /** The issuing key of a customer token, by id. */
  async verifyId(keyId: string): Promise<VerifiedKey> {
    let entry = this.byId?.get(keyId);
    if (!entry) {
      const generation = this.generation;
      const row = await this.options.store.keyById(keyId);
      if (!row) throw unauthorized('Customer token is invalid');
      entry = this.compile(row);
      if (generation === this.generation) this.byId?.set(keyId, entry);
    }
    this.assertUsable(entry, this.options.clock.now().getTime());
    return entry;
  }

  principalOf(entry: VerifiedKey): Principal {
    return entry.principal;
  }

  private assertUsable(entry: VerifiedKey, nowMs: number): void {
    if (entry.row.revoked_at) throw unauthorized('API key has been revoked');
    if (!(entry.expiresAtMs > nowMs)) throw unauthorized('API key has expired');
  }

  private compile(row: KeyRow): VerifiedKey {
    const ips = JSON.parse(row.allowed_ips) as string[];
    const services = JSON.parse(row.services) as string[];
    const scopes = JSON.parse(row.scopes) as string[];
    const ipAllowed = ips.length > 0 ? ipMatcher(ips) : null;
    const models = modelsOf(JSON.parse(row.models) as string[], scopes);
    // Shared by every request of the key: frozen so that no request can change another's grant.
    Object.freeze(services);
    Object.freeze(scopes);
    if (models) Object.freeze(models);
    const principal: Principal = Object.freeze({
      kind: 'api_key',
      accountId: row.account_id,
      keyId: row.id,
      keyType: row.type,
      services,
      role: row.role,
      scopes,
      customerId: null,
      dailyQuota: this.options.quotaFor(row),
      models,
      dailyTokenBudget: row.daily_token_budget,
      ipAllowed,
    });
    return {
      row,
      services,
      scopes,
      ipAllowed,
      expiresAtMs: Date.parse(row.expires_at),
      principal,
      tokenBinding: createHash('sha256')
        .update(`customer-token\0${row.hash}`)
        .digest('base64url')
        .slice(0, 22),
    };
  }

  /** lastUsedAt is written at most once a minute per key, off the request path. */
  private touch(keyId: string, nowMs: number): void {
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (nowMs - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWrites.set(keyId, nowMs);
    this.options.store
      .updateKey(keyId, { last_used_at: new Date(nowMs).toISOString() })
      .then(() => this.options.onTouched?.(keyId))
      .catch((error) => this.options.onError(error));
  }
}

function selectorOf(value: string): string {
  return value.slice(0, value.length - VERIFIER_LENGTH);
}
