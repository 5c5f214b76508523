import { type Clock, isoNow } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import type { SecretBox } from '../../core/secrets.js';
import type { CredentialPatchBodyT } from './credential-n8n-schemas.js';
import type { CredentialStore } from './credential-store.js';
import {
  CREDENTIAL_TYPES,
  type CredentialBodyT,
  type CredentialType,
  JWT_ALGORITHMS,
  OPTIONAL_CREDENTIAL_FIELDS,
} from './schemas.js';

export const CREDENTIAL_LIST_SPEC: ListSpec = {
  columns: { createdAt: 'created_at', updatedAt: 'updated_at' },
  sortable: ['id', 'name', 'createdAt'],
  filters: { name: 'string', type: Object.keys(CREDENTIAL_TYPES) },
  projectable: ['id', 'name', 'type', 'createdAt', 'updatedAt'],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 100,
  maxLimit: 250,
};

const view = (row: { id: string; name: string; type: string; created_at: string; updated_at: string }) => ({
  id: row.id,
  name: row.name,
  type: row.type,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

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
  ];
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid credential data', { fields: problems });
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

/** Credentials are sealed at rest and never leave the service in clear. */
export class CredentialService {
  constructor(
    private readonly store: CredentialStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, body: CredentialBodyT) {
    checkData(body.type, body.data);
    const at = isoNow(this.clock);
    const row = {
      id: newId('cred'),
      account_id: accountId,
      name: body.name,
      type: body.type,
      data: this.box.encrypt(JSON.stringify(body.data)),
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
  async update(accountId: string, id: string, body: CredentialPatchBodyT) {
    const row = await this.store.find(accountId, id);
    if (!row || row.id !== id) throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    if (body.type !== undefined && body.type !== row.type) {
      throw new AppError('VALIDATION_ERROR', 'A credential keeps its type', {
        fields: [{ field: 'type', message: `is ${row.type}; create a new credential for another type` }],
      });
    }
    const changes: { name?: string; data?: string; updated_at: string } = { updated_at: isoNow(this.clock) };
    if (body.name !== undefined) changes.name = body.name;
    if (body.data !== undefined) {
      const data = body.isPartialData
        ? { ...(JSON.parse(this.box.decrypt(row.data)) as Record<string, string>), ...body.data }
        : body.data;
      checkData(row.type as CredentialType, data);
      changes.data = this.box.encrypt(JSON.stringify(data));
    }
    try {
      await this.store.update(accountId, id, changes);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('CONFLICT', `A credential named '${body.name}' exists`, { name: body.name });
      throw error;
    }
    return view({ ...row, ...changes });
  }

  /** n8n's `GET /credentials/schema/{type}`: the JSON schema of a supported type's data. */
  schemaOf(type: string) {
    if (!Object.hasOwn(CREDENTIAL_TYPES, type)) throw notFound('NOT_FOUND', 'Credential type', type);
    const fields: readonly string[] = CREDENTIAL_TYPES[type as CredentialType];
    const optional = OPTIONAL_CREDENTIAL_FIELDS[type as CredentialType] ?? [];
    return {
      additionalProperties: false as const,
      type: 'object' as const,
      properties: Object.fromEntries([...fields, ...optional].map((f) => [f, { type: 'string' as const }])),
      required: [...fields],
    };
  }

  async delete(accountId: string, id: string) {
    const shown = await this.get(accountId, id);
    await this.store.delete(accountId, id);
    return shown;
  }

  /** The clear data of a credential, by id or name, for the engine and webhook checks. */
  async reveal(
    accountId: string,
    ref: string,
  ): Promise<{ type: string; data: Record<string, string> } | null> {
    const row = await this.store.find(accountId, ref);
    if (!row) return null;
    return { type: row.type, data: JSON.parse(this.box.decrypt(row.data)) as Record<string, string> };
  }
}
