import { type Clock, isoNow } from '../../../core/clock.js';
import { isUniqueViolation } from '../../../core/db/database.js';
import { runList } from '../../../core/db/list.js';
import { AppError, notFound } from '../../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../../core/http/list-query.js';
import { tagIdOf } from '../definitions/definitions.js';
import { TAG_LIST_RULES, type TagBodyT, type WorkflowTagsBodyT } from './schemas.js';
import type { TagRow, TagStore } from './store.js';

const TAG_LIST_SPEC: ListSpec = {
  ...TAG_LIST_RULES,
  columns: { name: 'name', createdAt: 'created_at' },
};

const view = (row: Pick<TagRow, 'id' | 'name' | 'created_at' | 'updated_at'>) => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * n8n's tags (`/api/v1/tags`, `/api/v1/workflows/{id}/tags`), per account. A workflow keeps its tags'
 * names; a tag's id is derived from its name, so renaming a tag gives it a new id (n8n keeps the id).
 */
export class TagService {
  constructor(
    private readonly store: TagStore,
    private readonly clock: Clock,
  ) {}

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, TAG_LIST_SPEC);
    return runList(this.store.listQuery(accountId), query, TAG_LIST_SPEC, view);
  }

  async get(accountId: string, id: string) {
    return view(await this.mustGet(accountId, id));
  }

  async create(accountId: string, body: TagBodyT) {
    const at = isoNow(this.clock);
    const row: TagRow = {
      account_id: accountId,
      id: tagIdOf(body.name),
      name: body.name,
      created_at: at,
      updated_at: at,
    };
    await this.unique(body.name, () => this.store.insert(row));
    return view(row);
  }

  /** Tags a saved workflow names that the account did not have yet. */
  async ensure(accountId: string, names: string[]): Promise<void> {
    const at = isoNow(this.clock);
    await this.store.ensure(
      [...new Set(names)].map((name) => ({
        account_id: accountId,
        id: tagIdOf(name),
        name,
        created_at: at,
        updated_at: at,
      })),
    );
  }

  /** Renames a tag, in every workflow of the account that carries it. */
  async rename(accountId: string, id: string, body: TagBodyT) {
    const row = await this.mustGet(accountId, id);
    const at = isoNow(this.clock);
    const next = { id: tagIdOf(body.name), name: body.name, updated_at: at };
    if (body.name === row.name) return view({ ...row, ...next });
    await this.unique(body.name, () => this.store.rename(accountId, id, next));
    for (const wf of await this.store.workflowsTagged(accountId, row.name)) {
      const names = (JSON.parse(wf.tags) as string[]).map((n) => (n === row.name ? body.name : n));
      await this.store.setWorkflowTags(accountId, wf.id, [...new Set(names)], at);
    }
    return view({ ...row, ...next });
  }

  /** Deletes a tag and takes it off every workflow of the account. */
  async delete(accountId: string, id: string) {
    const row = await this.mustGet(accountId, id);
    const at = isoNow(this.clock);
    for (const wf of await this.store.workflowsTagged(accountId, row.name)) {
      const names = (JSON.parse(wf.tags) as string[]).filter((n) => n !== row.name);
      await this.store.setWorkflowTags(accountId, wf.id, names, at);
    }
    await this.store.delete(accountId, id);
    return view(row);
  }

  async workflowTags(accountId: string, workflowId: string) {
    const names = await this.store.workflowTags(accountId, workflowId);
    if (!names) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', workflowId);
    await this.ensure(accountId, names);
    const rows = await this.store.byIds(accountId, names.map(tagIdOf));
    const byId = new Map(rows.map((r) => [r.id, r]));
    return names.flatMap((name) => {
      const row = byId.get(tagIdOf(name));
      return row ? [view(row)] : [];
    });
  }

  /** Sets a workflow's tags to the given ones (each must exist in the account). */
  async setWorkflowTags(accountId: string, workflowId: string, body: WorkflowTagsBodyT) {
    if ((await this.store.workflowTags(accountId, workflowId)) === undefined)
      throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', workflowId);
    const ids = [...new Set(body.map((t) => t.id))];
    const rows = await this.store.byIds(accountId, ids);
    const missing = ids.filter((id) => !rows.some((r) => r.id === id));
    if (missing.length > 0)
      throw new AppError('NOT_FOUND', `No tag ${missing.map((m) => `'${m}'`).join(', ')} in this account`, {
        ids: missing,
      });
    const byId = new Map(rows.map((r) => [r.id, r]));
    await this.store.setWorkflowTags(
      accountId,
      workflowId,
      ids.map((id) => (byId.get(id) as TagRow).name),
      isoNow(this.clock),
    );
    return this.workflowTags(accountId, workflowId);
  }

  private async mustGet(accountId: string, id: string): Promise<TagRow> {
    const row = await this.store.find(accountId, id);
    if (!row) throw notFound('NOT_FOUND', 'Tag', id);
    return row;
  }

  private async unique(name: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `A tag named '${name}' exists`, { name });
      throw error;
    }
  }
}
