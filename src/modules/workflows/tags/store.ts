import type { Db } from '../../../core/db/database.js';
import type { Timestamp } from '../../../core/db/types.js';

/** n8n's tags of one account (migration 305). */
interface WorkflowTagsTable {
  account_id: string;
  id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../../core/db/types.js' {
  interface Database {
    workflow_tags: WorkflowTagsTable;
  }
}

export type TagRow = WorkflowTagsTable;

export class TagStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db
      .selectFrom('workflow_tags')
      .select(['id', 'name', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId);
  }

  async find(accountId: string, id: string): Promise<TagRow | undefined> {
    return this.db
      .selectFrom('workflow_tags')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async byIds(accountId: string, ids: string[]): Promise<TagRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('workflow_tags')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
  }

  async insert(row: TagRow): Promise<void> {
    await this.db.insertInto('workflow_tags').values(row).execute();
  }

  /** Adds the tags not yet known (a workflow saved with new tag names). */
  async ensure(rows: TagRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('workflow_tags')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async rename(
    accountId: string,
    id: string,
    next: Pick<TagRow, 'id' | 'name' | 'updated_at'>,
  ): Promise<void> {
    await this.db
      .updateTable('workflow_tags')
      .set(next)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.db
      .deleteFrom('workflow_tags')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  }

  /** The account's workflows carrying tag `name` (their tag lists are JSON arrays of names). */
  async workflowsTagged(accountId: string, name: string): Promise<Array<{ id: string; tags: string }>> {
    const rows = await this.db
      .selectFrom('workflows')
      .select(['id', 'tags'])
      .where('account_id', '=', accountId)
      .where('tags', '!=', '[]')
      .execute();
    return rows.filter((r) => (JSON.parse(r.tags) as string[]).includes(name));
  }

  async workflowTags(accountId: string, workflowId: string): Promise<string[] | undefined> {
    const row = await this.db
      .selectFrom('workflows')
      .select('tags')
      .where('account_id', '=', accountId)
      .where('id', '=', workflowId)
      .executeTakeFirst();
    return row ? (JSON.parse(row.tags) as string[]) : undefined;
  }

  async setWorkflowTags(accountId: string, workflowId: string, names: string[], at: string): Promise<void> {
    await this.db
      .updateTable('workflows')
      .set({ tags: JSON.stringify(names), updated_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', workflowId)
      .execute();
  }
}
