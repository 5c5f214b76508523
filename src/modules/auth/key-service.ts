import { LRUCache } from 'lru-cache';
import { isCapabilityScope, modelsOf, type Principal, ROLES } from '../../core/auth/principal.js';
import { addSeconds, type Clock } from '../../core/clock.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListQuery, type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import { generateKey, hashKey, KEY_PREFIX } from './key-format.js';
import {
  assertCapabilitiesWithinCaller,
  assertWithinCaller,
  type Grant,
  type KeyBounds,
  validateGrant,
} from './key-rules.js';
import { ApiKeyView, type ApiKeyViewT, type CreateKeyInput, type UpdateKeyInput } from './schemas.js';
import type { AuthStore, KeyRow } from './store.js';

const DAY = 86_400;
const DEFAULT_EXPIRY_SECONDS = { production: 365 * DAY, development: 90 * DAY } as const;

export const KEY_LIST_SPEC: ListSpec = {
  columns: { createdAt: 'created_at', expiresAt: 'expires_at', lastUsedAt: 'last_used_at' },
  sortable: ['id', 'name', 'createdAt', 'expiresAt', 'lastUsedAt'],
  nullable: ['lastUsedAt'],
  filters: {
    type: ['development', 'production'],
    role: ROLES,
    name: 'string',
  },
  projectable: Object.keys(ApiKeyView.properties),
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 50,
  maxLimit: 200,
};

interface KeyServiceDeps {
  store: AuthStore;
  clock: Clock;
  quotas: { development: number; production: number };
  /** Drops a key from every verification cache (this process and, with Redis, the others). */
  invalidate(keyId: string): void;
  /**
   * Keeps rows read by id for reuse while no other connection has written to the database
   * (`DatabaseHandle.dataVersion`, SQLite); without it every read goes to the database.
   */
  rowCache?: { dataVersion(): number; max: number };
}

/** A row as read, with its JSON columns parsed once, and the database version it was read at. */
interface CachedRow {
  row: KeyRow;
  version: number;
  services: string[];
  scopes: string[];
  allowedIps: string[];
  models: string[];
  expiresAtMs: number;
}

/** Use-cases of API key management. `caller` is null for the CLI and first-start bootstrap. */
export class KeyService {
  private readonly rows: LRUCache<string, CachedRow> | null;
  /** Bumped by every write of a key in this process: a read that raced one is not kept. */
  private generation = 0;

  constructor(private readonly deps: KeyServiceDeps) {
    this.rows = deps.rowCache ? new LRUCache({ max: deps.rowCache.max }) : null;
  }

  /** Forgets the kept row of a key; called after every write of it made in this process. */
  forget(keyId: string): void {
    this.generation++;
    this.rows?.delete(keyId);
  }

  effectiveQuota(row: Pick<KeyRow, 'daily_quota' | 'type'>): number {
    return row.daily_quota ?? this.deps.quotas[row.type];
  }

  /** A key's grant and bounds, as compared with the key that manages it. */
  private limitsOf(row: KeyRow): Grant & KeyBounds {
    const scopes = JSON.parse(row.scopes) as string[];
    return {
      role: row.role,
      services: JSON.parse(row.services) as string[],
      scopes,
      type: row.type,
      expiresAtMs: Date.parse(row.expires_at),
      dailyQuota: this.effectiveQuota(row),
      allowedIps: JSON.parse(row.allowed_ips) as string[],
      models: modelsOf(JSON.parse(row.models) as string[], scopes),
      dailyTokenBudget: row.daily_token_budget,
    };
  }

  /**
   * The bounds of a calling key, read fresh (its own changes apply at once); null for callers
   * without a key (the CLI, bootstrap, sessions), which only their scopes bound.
   */
  private async callerBounds(caller: Principal | null): Promise<KeyBounds | null> {
    if (!caller?.keyId) return null;
    const row = await this.deps.store.keyById(caller.keyId);
    if (!row) throw new AppError('UNAUTHORIZED', 'API key is invalid');
    return this.limitsOf(row);
  }

  view(row: KeyRow): ApiKeyViewT {
    return this.viewOf(
      row,
      JSON.parse(row.services) as string[],
      JSON.parse(row.scopes) as string[],
      JSON.parse(row.allowed_ips) as string[],
      JSON.parse(row.models) as string[],
      Date.parse(row.expires_at),
    );
  }

  private viewOf(
    row: KeyRow,
    services: string[],
    scopes: string[],
    allowedIps: string[],
    models: string[],
    expiresAtMs: number,
  ): ApiKeyViewT {
    const nowMs = this.deps.clock.now().getTime();
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      prefix: KEY_PREFIX[row.type],
      last4: row.last4,
      services,
      role: row.role,
      scopes,
      allowedIps,
      dailyQuota: this.effectiveQuota(row),
      models,
      dailyTokenBudget: row.daily_token_budget,
      status: row.revoked_at ? 'revoked' : expiresAtMs > nowMs ? 'active' : 'expired',
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
      lastUsedAt: row.last_used_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async create(
    accountId: string,
    input: CreateKeyInput,
    caller: Principal | null,
    presetKey?: string,
  ): Promise<ApiKeyViewT & { key: string }> {
    const grant = { role: input.role, services: input.services, scopes: input.scopes ?? [] };
    validateGrant(grant, input.allowedIps);
    assertWithinCaller(grant, caller);
    assertCapabilitiesWithinCaller(grant.scopes, caller);
    const bounds = await this.callerBounds(caller);
    const now = this.deps.clock.now();
    const maxExpiry = addSeconds(now, DEFAULT_EXPIRY_SECONDS[input.type]);
    // What is left unsaid is the most the creator may give: its own expiry, quota and addresses.
    let expiresAt =
      bounds && bounds.expiresAtMs < maxExpiry.getTime() ? new Date(bounds.expiresAtMs) : maxExpiry;
    if (input.expiresAt !== undefined) {
      expiresAt = new Date(input.expiresAt);
      if (Number.isNaN(expiresAt.getTime()) || expiresAt <= now) {
        throw new AppError('VALIDATION_ERROR', 'expiresAt must be in the future', {
          fields: [{ field: 'body.expiresAt', message: 'must be in the future' }],
        });
      }
      if (expiresAt > maxExpiry) {
        throw new AppError(
          'VALIDATION_ERROR',
          `A ${input.type} key may live at most until ${maxExpiry.toISOString()}`,
          {
            fields: [{ field: 'body.expiresAt', message: `must be at most ${maxExpiry.toISOString()}` }],
          },
        );
      }
    }
    let dailyQuota = input.dailyQuota ?? null;
    if (dailyQuota === null && bounds && this.deps.quotas[input.type] > bounds.dailyQuota)
      dailyQuota = bounds.dailyQuota;
    const allowedIps = input.allowedIps ?? bounds?.allowedIps ?? [];
    // Likewise its models (unless the key's scopes name some) and its token budget.
    let models = input.models ?? [];
    if (input.models === undefined && bounds?.models && modelsOf(models, grant.scopes) === null)
      models = [...bounds.models];
    const dailyTokenBudget = input.dailyTokenBudget ?? bounds?.dailyTokenBudget ?? null;
    assertWithinCaller(
      {
        ...grant,
        type: input.type,
        expiresAtMs: expiresAt.getTime(),
        dailyQuota: dailyQuota ?? this.deps.quotas[input.type],
        allowedIps,
        models: modelsOf(models, grant.scopes),
        dailyTokenBudget,
      },
      caller,
      bounds,
    );
    const key = presetKey ?? generateKey(input.type);
    const row: KeyRow = {
      id: newId('key'),
      account_id: accountId,
      name: input.name,
      type: input.type,
      role: input.role,
      services: JSON.stringify(input.services),
      scopes: JSON.stringify(grant.scopes),
      allowed_ips: JSON.stringify(allowedIps),
      daily_quota: dailyQuota,
      models: JSON.stringify(models),
      daily_token_budget: dailyTokenBudget,
      hash: hashKey(key),
      previous_hash: null,
      previous_expires_at: null,
      last4: key.slice(-4),
      expires_at: expiresAt.toISOString(),
      revoked_at: null,
      last_used_at: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
    await this.deps.store.insertKey(row);
    return { ...this.view(row), key };
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query: ListQuery = parseListQuery(rawQuery, KEY_LIST_SPEC);
    return runList(this.deps.store.keysQuery(accountId), query, KEY_LIST_SPEC, (row) => this.view(row));
  }

  async get(accountId: string, id: string): Promise<ApiKeyViewT> {
    const kept = this.kept(accountId, id);
    if (kept)
      return this.viewOf(
        kept.row,
        kept.services,
        kept.scopes,
        kept.allowedIps,
        kept.models,
        kept.expiresAtMs,
      );
    return this.view(await this.mustGet(accountId, id));
  }

  /** The kept row of a key, if no other connection has written since it was read. */
  private kept(accountId: string, id: string): CachedRow | undefined {
    const cached = this.rows?.get(id);
    if (!cached) return undefined;
    if (cached.version !== this.deps.rowCache?.dataVersion()) {
      this.rows?.delete(id);
      return undefined;
    }
    if (cached.row.account_id !== accountId) throw notFound('API_KEY_NOT_FOUND', 'API key', id);
    return cached;
  }

  private keep(row: KeyRow, version: number, generation: number): void {
    if (!this.rows || generation !== this.generation) return;
    // Shared by every view of the row until it changes: frozen so no caller can alter another's.
    const parse = (json: string) => Object.freeze(JSON.parse(json)) as string[];
    this.rows.set(row.id, {
      row: Object.freeze(row),
      version,
      services: parse(row.services),
      scopes: parse(row.scopes),
      allowedIps: parse(row.allowed_ips),
      models: parse(row.models),
      expiresAtMs: Date.parse(row.expires_at),
    });
  }

  async update(
    accountId: string,
    id: string,
    patch: UpdateKeyInput,
    caller: Principal | null,
  ): Promise<ApiKeyViewT> {
    const row = await this.mustGet(accountId, id);
    if (row.revoked_at) throw new AppError('CONFLICT', 'A revoked key cannot be changed', { id });
    // Only a key that holds all of the target may change it (else a core-only admin could narrow
    // or IP-lock the owner's key), and the result may not exceed it either.
    const bounds = await this.callerBounds(caller);
    assertWithinCaller(this.limitsOf(row), caller, bounds);
    const role = patch.role ?? row.role;
    const services = patch.services ?? (JSON.parse(row.services) as string[]);
    // Leaving Custom drops its scopes; entering it needs them.
    const kept = JSON.parse(row.scopes) as string[];
    const scopes = patch.scopes ?? (role === 'Custom' ? kept : kept.filter(isCapabilityScope));
    const grant = { role, services, scopes };
    validateGrant(grant, patch.allowedIps);
    assertWithinCaller(grant, caller);
    assertCapabilitiesWithinCaller(scopes, caller);
    const next: KeyRow = {
      ...row,
      name: patch.name ?? row.name,
      role,
      services: JSON.stringify(services),
      scopes: JSON.stringify(scopes),
      allowed_ips: patch.allowedIps ? JSON.stringify(patch.allowedIps) : row.allowed_ips,
      daily_quota: patch.dailyQuota === undefined ? row.daily_quota : patch.dailyQuota,
      models: patch.models ? JSON.stringify(patch.models) : row.models,
      daily_token_budget:
        patch.dailyTokenBudget === undefined ? row.daily_token_budget : patch.dailyTokenBudget,
      updated_at: this.deps.clock.now().toISOString(),
    };
    assertWithinCaller(this.limitsOf(next), caller, bounds);
    // Only the fields a change sets, and only while the key is not revoked: a whole row written back
    // would undo a revocation or a rotation made meanwhile.
    const changed = await this.deps.store.updateKey(
      id,
      {
        name: next.name,
        role: next.role,
        services: next.services,
        scopes: next.scopes,
        allowed_ips: next.allowed_ips,
        daily_quota: next.daily_quota,
        models: next.models,
        daily_token_budget: next.daily_token_budget,
        updated_at: next.updated_at,
      },
      { revoked: true },
    );
    this.forget(id);
    this.deps.invalidate(id);
    if (!changed) throw new AppError('CONFLICT', 'A revoked key cannot be changed', { id });
    return this.view(next);
  }

  async revoke(accountId: string, id: string, caller: Principal | null = null): Promise<void> {
    const row = await this.mustGet(accountId, id);
    if (row.revoked_at) return;
    // Revoking is managing: a key may revoke only keys it holds all of (itself included).
    assertWithinCaller(this.limitsOf(row), caller, await this.callerBounds(caller));
    const now = this.deps.clock.now().toISOString();
    await this.deps.store.updateKey(
      id,
      { revoked_at: now, updated_at: now, previous_hash: null },
      { revoked: true },
    );
    this.forget(id);
    this.deps.invalidate(id);
  }

  async rotate(
    accountId: string,
    id: string,
    gracePeriodSeconds: number,
    caller: Principal | null,
  ): Promise<ApiKeyViewT & { key: string }> {
    const row = await this.mustGet(accountId, id);
    if (row.revoked_at) throw new AppError('CONFLICT', 'A revoked key cannot be rotated', { id });
    // The new value is the key's whole grant in the caller's hands: only a caller holding all of
    // it may have it (else a core-only admin could rotate the owner's key and use every service).
    assertWithinCaller(this.limitsOf(row), caller, await this.callerBounds(caller));
    const now = this.deps.clock.now();
    const key = generateKey(row.type);
    const next: KeyRow = {
      ...row,
      hash: hashKey(key),
      last4: key.slice(-4),
      previous_hash: gracePeriodSeconds > 0 ? row.hash : null,
      previous_expires_at: gracePeriodSeconds > 0 ? addSeconds(now, gracePeriodSeconds).toISOString() : null,
      updated_at: now.toISOString(),
    };
    // A compare-and-set on the value read: of rotations racing, one wins (the others are 409s, not
    // new values that are dead on arrival), and none undoes a revocation.
    const rotated = await this.deps.store.updateKey(
      id,
      {
        hash: next.hash,
        last4: next.last4,
        previous_hash: next.previous_hash,
        previous_expires_at: next.previous_expires_at,
        updated_at: next.updated_at,
      },
      { revoked: true, hash: row.hash },
    );
    this.forget(id);
    this.deps.invalidate(id);
    if (!rotated)
      throw new AppError('CONFLICT', 'The key was rotated or revoked meanwhile; read it and try again', {
        id,
      });
    return { ...this.view(next), key };
  }

  /** Reads the row from the database (writes always do); a plain read keeps it for reuse. */
  private async mustGet(accountId: string, id: string): Promise<KeyRow> {
    const generation = this.generation;
    const version = this.deps.rowCache?.dataVersion();
    const row = await this.deps.store.keyOfAccount(accountId, id);
    if (!row) throw notFound('API_KEY_NOT_FOUND', 'API key', id);
    if (version !== undefined) this.keep({ ...row }, version, generation);
    return row;
  }
}
