import { type Clock, isoNow } from '../../../core/clock.js';
import { isUniqueViolation } from '../../../core/db/database.js';
import { runList } from '../../../core/db/list.js';
import { AppError, notFound } from '../../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../../core/http/list-query.js';
import { newId } from '../../../core/ids.js';
import type { VariableBodyT, VariablePatchT } from './schemas.js';
import { VARIABLE_LIST_RULES } from './schemas.js';
import type { VariableRow, VariableStore } from './store.js';

const VARIABLE_LIST_SPEC: ListSpec = { ...VARIABLE_LIST_RULES, columns: {} };

const view = (row: Pick<VariableRow, 'id' | 'key' | 'value'>) => ({
  id: row.id,
  key: row.key,
  value: row.value,
  type: 'string' as const,
  project: null,
});

/**
 * How long a process trusts the variables it read for an account. Changes made through this
 * process are seen at once; another process (an API node, a worker) sees them within this time.
 */
const VARS_TTL_MS = 1_000;
const VARS_CACHE_MAX = 1_000;

/** n8n's variables: per account, read by expressions as `$vars`. */
export class VariableService {
  private readonly cache = new Map<string, { vars: Record<string, string>; at: number }>();

  constructor(
    private readonly store: VariableStore,
    private readonly clock: Clock,
  ) {}

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const { state, ...rest } = rawQuery;
    const query = parseListQuery(rest, VARIABLE_LIST_SPEC);
    let base = this.store.listQuery(accountId);
    if (state === 'empty') base = base.where('value', '=', '');
    return runList(base, query, VARIABLE_LIST_SPEC, view);
  }

  async create(accountId: string, body: VariableBodyT) {
    const at = isoNow(this.clock);
    const row: VariableRow = {
      id: newId('var'),
      account_id: accountId,
      key: body.key,
      value: body.value,
      created_at: at,
      updated_at: at,
    };
    await this.saving(body.key, () => this.store.insert(row));
    this.stale(accountId);
    return view(row);
  }

  async update(accountId: string, id: string, body: VariablePatchT) {
    const row = await this.store.find(accountId, id);
    if (!row) throw notFound('NOT_FOUND', 'Variable', id);
    const changes = {
      ...(body.key !== undefined ? { key: body.key } : {}),
      ...(body.value !== undefined ? { value: body.value } : {}),
      updated_at: isoNow(this.clock),
    };
    await this.saving(body.key ?? row.key, () => this.store.update(accountId, id, changes));
    this.stale(accountId);
    return view({ ...row, ...changes });
  }

  async delete(accountId: string, id: string) {
    if (!(await this.store.delete(accountId, id))) throw notFound('NOT_FOUND', 'Variable', id);
    this.stale(accountId);
  }

  /** The account's variables as `$vars` (read through a short cache: one query per account a second at most). */
  async varsOf(accountId: string): Promise<Record<string, string>> {
    const now = performance.now();
    const hit = this.cache.get(accountId);
    if (hit && now - hit.at < VARS_TTL_MS) return hit.vars;
    const vars: Record<string, string> = Object.create(null);
    for (const { key, value } of await this.store.all(accountId)) vars[key] = value;
    if (this.cache.size >= VARS_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(accountId, { vars, at: now });
    return vars;
  }

  /** The last `varsOf` answer for an account (empty before any). */
  cachedVarsOf(accountId: string): Record<string, string> {
    return this.cache.get(accountId)?.vars ?? {};
  }

  /** The next `varsOf` reads again; runs under way keep the values they have. */
  private stale(accountId: string): void {
    const hit = this.cache.get(accountId);
    if (hit) hit.at = Number.NEGATIVE_INFINITY;
  }

  private async saving(key: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('CONFLICT', `A variable with the key '${key}' exists`, { key });
      throw error;
    }
  }
}
