import type { Principal } from '../../../core/auth/principal.js';
import { type Clock, isoNow } from '../../../core/clock.js';
import { isUniqueViolation } from '../../../core/db/database.js';
import { runList } from '../../../core/db/list.js';
import { AppError, notFound } from '../../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../../core/http/list-query.js';
import type { AddressGuard, OutboundHttp } from '../../../core/http/outbound.js';
import { newId } from '../../../core/ids.js';
import type { SecretBox } from '../../../core/secrets.js';
import {
  CREDENTIAL_TYPES,
  type CredentialBodyT,
  type CredentialType,
  JWT_ALGORITHMS,
  OPTIONAL_CREDENTIAL_FIELDS,
} from '../schemas.js';
import { ACCOUNT_ACTOR, actorOf, mayManage, mayUse, notUsableAtRun, savedByOf } from './access.js';
import { type CredentialTestResult, testCredential } from './connection-test.js';
import { customAuth, multipleHeaders, STRUCTURED_FIELDS } from './http-auth-data.js';
import type { CredentialPatchBodyT } from './n8n-schemas.js';
import { oauth2Config, sameClient } from './oauth2/config.js';
import { isOAuth2Type, TOKEN_DATA_FIELD } from './oauth2/types.js';
import { RevealCache, type Revealed } from './reveal-cache.js';
import { CREDENTIAL_WRITE_ATTEMPTS, type CredentialRow, type CredentialStore } from './store.js';

export const CREDENTIAL_LIST_SPEC: ListSpec = {
  columns: { createdAt: 'created_at', updatedAt: 'updated_at' },
  sortable: ['id', 'name', 'createdAt'],
  filters: { name: 'string', type: Object.keys(CREDENTIAL_TYPES) },
  projectable: ['id', 'name', 'type', 'owner', 'createdAt', 'updatedAt'],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 100,
  maxLimit: 250,
};

const view = (row: {
  id: string;
  name: string;
  type: string;
  owner: string;
  created_at: string;
  updated_at: string;
}) => ({
  id: row.id,
  name: row.name,
  type: row.type,
  owner: row.owner,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * The data as stored: every value its text (n8n's API sends ports and switches as numbers and booleans,
 * and a structured field as an object: its JSON). An object anywhere else is refused.
 */
function asText(type: string, data: CredentialBodyT['data']): Record<string, string> {
  // An OAuth2 credential's tokens come from its provider (consent, client credentials), never from a caller.
  if (Object.hasOwn(data, TOKEN_DATA_FIELD))
    throw new AppError('VALIDATION_ERROR', 'Invalid credential data', {
      fields: [
        {
          field: `data.${TOKEN_DATA_FIELD}`,
          message:
            'is set by the platform: connect the credential (POST /api/v1/credentials/{id}/oauth2/authorize)',
        },
      ],
    });
  const structured = STRUCTURED_FIELDS[type] ?? [];
  const objects = Object.entries(data).filter(([k, v]) => typeof v === 'object' && !structured.includes(k));
  if (objects.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid credential data', {
      fields: objects.map(([k]) => ({ field: `data.${k}`, message: 'must be a string, number or boolean' })),
    });
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
  );
}

/** Every field of the type, non-empty, and nothing else; all problems in one 400. */
function checkData(type: CredentialType, data: Record<string, string>): void {
  const wanted: readonly string[] = CREDENTIAL_TYPES[type];
  const optional = OPTIONAL_CREDENTIAL_FIELDS[type] ?? [];
  const problems = [
    ...wanted
      .filter((f) => typeof data[f] !== 'string' || data[f] === '')
      .map((f) => ({ field: `data.${f}`, message: `is required for type ${type}` })),
    ...Object.keys(data)
      .filter((f) => !wanted.includes(f) && !optional.includes(f))
      .map((f) => ({ field: `data.${f}`, message: `is not a field of type ${type}` })),
    ...(type === 'jwtAuth' ? jwtProblems(data) : []),
    ...structuredProblems(type, data),
    ...(isOAuth2Type(type) ? oauth2Config(type, data).problems : []),
  ];
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid credential data', { fields: problems });
}

/**
 * n8n keeps an OAuth2 credential's tokens when its data is replaced; not when the client or its
 * endpoints change (tokens of another client or provider are of no use, and a token URL could now
 * point elsewhere).
 */
function keepTokens(type: string, stored: Record<string, string>, next: Record<string, string>): void {
  const tokens = stored[TOKEN_DATA_FIELD];
  delete next[TOKEN_DATA_FIELD];
  if (!isOAuth2Type(type) || tokens === undefined) return;
  if (sameClient(oauth2Config(type, stored).config, oauth2Config(type, next).config))
    next[TOKEN_DATA_FIELD] = tokens;
}

/** httpMultipleHeadersAuth's headers and httpCustomAuth's JSON, read as a request will read them. */
function structuredProblems(type: CredentialType, data: Record<string, string>) {
  const problems: Array<{ field: string; message: string }> = [];
  const check = (field: string, read: (text: string) => unknown) => {
    const text = data[field];
    if (typeof text !== 'string' || text === '') return;
    try {
      read(text);
    } catch (error) {
      problems.push({ field: `data.${field}`, message: (error as Error).message });
    }
  };
  if (type === 'httpMultipleHeadersAuth') check('headers', multipleHeaders);
  if (type === 'httpCustomAuth') check('json', (text) => customAuth(text, true));
  if (type === 'qdrantApi' && !data.qdrantUrl && !data.apiUrl)
    problems.push({ field: 'data.qdrantUrl', message: 'is required for type qdrantApi (or apiUrl)' });
  return problems;
}

/**
 * n8n's jwtAuth: `keyType` passphrase (default; needs `secret`) or pemKey (needs a PEM `privateKey`
 * to sign, a `publicKey` to verify; at least one), and an `algorithm` (default HS256) that fits it.
 */
function jwtProblems(data: Record<string, string>): Array<{ field: string; message: string }> {
  const keyType = data.keyType ?? 'passphrase';
  const algorithm = data.algorithm ?? 'HS256';
  const problems: Array<{ field: string; message: string }> = [];
  if (keyType !== 'passphrase' && keyType !== 'pemKey')
    problems.push({ field: 'data.keyType', message: "must be 'passphrase' or 'pemKey'" });
  if (!(JWT_ALGORITHMS as readonly string[]).includes(algorithm))
    problems.push({ field: 'data.algorithm', message: `must be one of ${JWT_ALGORITHMS.join(', ')}` });
  else if ((keyType === 'passphrase') !== algorithm.startsWith('HS'))
    problems.push({
      field: 'data.algorithm',
      message:
        keyType === 'passphrase'
          ? 'a passphrase signs with HS256/384/512'
          : 'a PEM key signs with RS, ES or PS',
    });
  if (keyType === 'passphrase' && !data.secret)
    problems.push({ field: 'data.secret', message: 'is required for a passphrase' });
  if (keyType === 'pemKey' && !data.privateKey && !data.publicKey)
    problems.push({
      field: 'data.privateKey',
      message: 'a PEM key needs privateKey (to sign) or publicKey (to verify)',
    });
  return problems;
}

/** How long a running workflow's decrypted credential is kept in memory, and how many at most. */
export const REVEAL_CACHE_DEFAULTS = { ttlMs: 5_000, max: 1_000 };

/** Credentials are sealed at rest and never leave the service in clear. */
export class CredentialService {
  private readonly revealed: RevealCache;

  constructor(
    private readonly store: CredentialStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    /** Where a credential's host may lead (the outbound guard), for the test action. */
    private readonly connectAddress?: AddressGuard,
    /** The guarded outbound HTTP client, for credentials tested over HTTP (aws). */
    private readonly http?: OutboundHttp,
    /** The in-memory cache of credentials revealed to running workflows (ttlMs 0: none). */
    cache: { ttlMs: number; max: number } = REVEAL_CACHE_DEFAULTS,
  ) {
    this.revealed = new RevealCache(cache);
  }

  /**
   * Drops the account's cached credentials: a workflow of it was saved (whose rights it runs with
   * may have changed). The credential changes below drop them themselves.
   */
  forgetRevealed(accountId: string): void {
    this.revealed.forgetAccount(accountId);
  }

  /**
   * n8n's `POST /credentials/{id}/test`: connects with the stored data and runs a trivial query or
   * PING. Anyone who may read the credential may test it; another account's id is a 404.
   */
  async test(accountId: string, id: string): Promise<CredentialTestResult> {
    const row = await this.store.find(accountId, id);
    if (!row || row.id !== id) throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    const guard = this.connectAddress;
    if (!guard) return { status: 'Error', message: 'Credential tests are not available here' };
    return testCredential(
      row.type,
      JSON.parse(this.box.decrypt(row.data)) as Record<string, string>,
      guard,
      this.http,
    );
  }

  /** Owned by its creator (`principal`; none: the operator, for the account). */
  async create(accountId: string, body: CredentialBodyT, principal: Principal | null = null) {
    const data = asText(body.type, body.data);
    checkData(body.type, data);
    const at = isoNow(this.clock);
    const row = {
      id: newId('cred'),
      account_id: accountId,
      name: body.name,
      type: body.type,
      data: this.box.encrypt(JSON.stringify(data)),
      owner: actorOf(principal),
      created_at: at,
      updated_at: at,
    };
    try {
      await this.store.insert(row);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('CONFLICT', `A credential named '${body.name}' exists`, { name: body.name });
      throw error;
    }
    return view(row);
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, CREDENTIAL_LIST_SPEC);
    return runList(this.store.listQuery(accountId), query, CREDENTIAL_LIST_SPEC, view);
  }

  async get(accountId: string, id: string) {
    const row = await this.store.find(accountId, id);
    if (!row || row.id !== id) throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    return view(row);
  }

  /**
   * n8n's PATCH: a new name and/or data (sealed again, checked against the type as on create);
   * the type stays. Data replaces the stored fields, or with `isPartialData` is merged into them.
   */
  async update(
    accountId: string,
    id: string,
    body: CredentialPatchBodyT,
    principal: Principal | null = null,
  ) {
    // The sealed data is written only if no one wrote it since it was read (a token renewal saving
    // meanwhile): a lost race reads again, so neither the new fields nor the new token is undone.
    for (let attempt = 1; ; attempt++) {
      const row = await this.managed(accountId, id, principal);
      if (body.type !== undefined && body.type !== row.type) {
        throw new AppError('VALIDATION_ERROR', 'A credential keeps its type', {
          fields: [{ field: 'type', message: `is ${row.type}; create a new credential for another type` }],
        });
      }
      const changes: { name?: string; data?: string; updated_at: string } = {
        updated_at: isoNow(this.clock),
      };
      if (body.name !== undefined) changes.name = body.name;
      if (body.data !== undefined) {
        const stored = JSON.parse(this.box.decrypt(row.data)) as Record<string, string>;
        const data = body.isPartialData
          ? { ...stored, ...asText(row.type, body.data) }
          : asText(row.type, body.data);
        keepTokens(row.type, stored, data);
        checkData(row.type as CredentialType, data);
        changes.data = this.box.encrypt(JSON.stringify(data));
      }
      let saved: boolean;
      try {
        saved = await this.store.update(accountId, id, changes, changes.data ? row.data : undefined);
      } catch (error) {
        if (isUniqueViolation(error))
          throw new AppError('CONFLICT', `A credential named '${body.name}' exists`, { name: body.name });
        throw error;
      }
      if (saved || changes.data === undefined) {
        this.revealed.forgetAccount(accountId);
        return view({ ...row, ...changes });
      }
      if (attempt >= CREDENTIAL_WRITE_ATTEMPTS)
        throw new AppError('CONFLICT', `Credential '${id}' kept changing while it was saved; try again`, {
          id,
        });
    }
  }

  /** n8n's `GET /credentials/schema/{type}`: the JSON schema of a supported type's data. */
  schemaOf(type: string) {
    if (!Object.hasOwn(CREDENTIAL_TYPES, type)) throw notFound('NOT_FOUND', 'Credential type', type);
    const fields: readonly string[] = CREDENTIAL_TYPES[type as CredentialType];
    const optional = (OPTIONAL_CREDENTIAL_FIELDS[type as CredentialType] ?? []).filter(
      (f) => f !== TOKEN_DATA_FIELD,
    );
    return {
      additionalProperties: false as const,
      type: 'object' as const,
      properties: Object.fromEntries([...fields, ...optional].map((f) => [f, { type: 'string' as const }])),
      required: [...fields],
    };
  }

  async delete(accountId: string, id: string, principal: Principal | null = null) {
    const row = await this.managed(accountId, id, principal);
    await this.store.delete(accountId, id);
    this.revealed.forgetAccount(accountId);
    return view(row);
  }

  /** A credential `principal` may change: its owner's, or any with credentials:use (Admin). */
  private async managed(accountId: string, id: string, principal: Principal | null): Promise<CredentialRow> {
    const row = await this.store.find(accountId, id);
    if (!row || row.id !== id) throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    if (!mayManage(principal, row.owner))
      throw new AppError(
        'FORBIDDEN',
        `Credential '${id}' belongs to ${row.owner}: only its owner or a key with credentials:use may change, share or delete it`,
        { id, owner: row.owner },
      );
    return row;
  }

  /**
   * n8n's `PUT /credentials/{id}/share`: the principals (`key:<id>`, `member:<id>`) that may use the
   * credential besides its owner, replacing the previous list. Keys and members of other accounts
   * are refused as unknown (checked by `known`).
   */
  async share(
    accountId: string,
    id: string,
    shareWithIds: string[],
    principal: Principal | null,
    known: (accountId: string, actor: string) => Promise<boolean>,
  ) {
    const row = await this.managed(accountId, id, principal);
    const wanted = [...new Set(shareWithIds)].filter((p) => p !== row.owner);
    await this.mustBeKnown(accountId, wanted, known, 'shareWithIds');
    await this.store.replaceShares(accountId, id, wanted, isoNow(this.clock));
    this.revealed.forgetAccount(accountId);
    return { id, owner: row.owner, sharedWith: wanted };
  }

  /** n8n's `PUT /credentials/{id}/transfer`: a new owner (`key:<id>`, `member:<id>` or `account`). */
  async transfer(
    accountId: string,
    id: string,
    destination: string,
    principal: Principal | null,
    known: (accountId: string, actor: string) => Promise<boolean>,
  ) {
    const row = await this.managed(accountId, id, principal);
    if (destination !== ACCOUNT_ACTOR)
      await this.mustBeKnown(accountId, [destination], known, 'destinationProjectId');
    const at = isoNow(this.clock);
    await this.store.transfer(accountId, id, destination, at);
    this.revealed.forgetAccount(accountId);
    return view({ ...row, owner: destination, updated_at: at });
  }

  /** Principals with whom a credential is shared. */
  async sharedWith(accountId: string, id: string): Promise<string[]> {
    await this.get(accountId, id);
    return [...((await this.store.sharesOf([id])).get(id) ?? [])].sort();
  }

  private async mustBeKnown(
    accountId: string,
    actors: string[],
    known: (accountId: string, actor: string) => Promise<boolean>,
    field: string,
  ): Promise<void> {
    const unknown: string[] = [];
    for (const actor of actors) if (!(await known(accountId, actor))) unknown.push(actor);
    if (unknown.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Share with keys or members of this account', {
        fields: unknown.map((u) => ({
          field,
          message: `'${u}' is not a key (key:<id>) or member (member:<id>) of this account`,
        })),
      });
  }

  /**
   * The clear data of a credential for a running workflow: only when the principal whose rights it
   * runs with (who saved it) may use it now. A share withdrawn since the save fails the node.
   */
  async revealForWorkflow(accountId: string, ref: string, workflowId: string): Promise<Revealed | null> {
    // Kept briefly (REVEAL_CACHE_DEFAULTS): two database reads and a decryption fewer per execution.
    const cached = this.revealed.get(accountId, ref, workflowId);
    if (cached) return cached;
    const row = await this.store.find(accountId, ref);
    if (!row) return null;
    const actor = (await this.store.savedBy(accountId, workflowId)) ?? ACCOUNT_ACTOR;
    if (actor !== ACCOUNT_ACTOR && row.owner !== actor) {
      const shared = (await this.store.sharesOf([row.id])).get(row.id) ?? new Set<string>();
      if (!mayUse(actor, row.owner, shared)) throw notUsableAtRun(ref, actor);
    }
    const revealed = {
      type: row.type,
      data: JSON.parse(this.box.decrypt(row.data)) as Record<string, string>,
    };
    this.revealed.set(accountId, ref, workflowId, revealed);
    return revealed;
  }

  /**
   * The clear data of a credential, by id or name, for work a principal does now (a chatflow's loaders
   * in its vector upsert): only one it may use (its own, shared with it, or any with `credentials:use`);
   * another is refused as a workflow save refuses it. null when the account has none of that id or name.
   */
  async revealFor(
    accountId: string,
    ref: string,
    principal: Principal | null,
  ): Promise<{ type: string; data: Record<string, string> } | null> {
    const row = await this.store.find(accountId, ref);
    if (!row) return null;
    const actor = savedByOf(principal);
    if (actor !== ACCOUNT_ACTOR && row.owner !== actor) {
      const shared = (await this.store.sharesOf([row.id])).get(row.id) ?? new Set<string>();
      if (!mayUse(actor, row.owner, shared))
        throw new AppError(
          'FORBIDDEN',
          `Credential '${ref}' is neither owned by nor shared with ${actor}: ask its owner to share it (PUT /api/v1/credentials/{id}/share), or use a key with credentials:use`,
          { credential: ref, actor },
        );
    }
    return { type: row.type, data: JSON.parse(this.box.decrypt(row.data)) as Record<string, string> };
  }

  /** The clear data of a credential, by id or name, for the platform's own uses and webhook checks. */
  async reveal(
    accountId: string,
    ref: string,
  ): Promise<{ type: string; data: Record<string, string> } | null> {
    const row = await this.store.find(accountId, ref);
    if (!row) return null;
    return { type: row.type, data: JSON.parse(this.box.decrypt(row.data)) as Record<string, string> };
  }
}
