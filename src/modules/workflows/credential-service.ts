import { type Clock, isoNow } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import type { SecretBox } from '../../core/secrets.js';
import type { CredentialStore } from './credential-store.js';
import { CREDENTIAL_TYPES, type CredentialBodyT } from './schemas.js';

const CREDENTIAL_LIST_SPEC: ListSpec = {
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

/** Credentials are sealed at rest and never leave the service in clear. */
export class CredentialService {
  constructor(
    private readonly store: CredentialStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, body: CredentialBodyT) {
    const wanted: readonly string[] = CREDENTIAL_TYPES[body.type];
    const problems = [
      ...wanted
        .filter((f) => typeof body.data[f] !== 'string' || body.data[f] === '')
        .map((f) => ({ field: `data.${f}`, message: `is required for type ${body.type}` })),
      ...Object.keys(body.data)
        .filter((f) => !wanted.includes(f))
        .map((f) => ({ field: `data.${f}`, message: `is not a field of type ${body.type}` })),
    ];
    if (problems.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Invalid credential data', { fields: problems });
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
