import type { Db } from '../../../core/db/database.js';
import type { Timestamp } from '../../../core/db/types.js';

/** n8n's variables of one account (migration 304). */
interface WorkflowVariablesTable {
  id: string;
  account_id: string;
  key: string;
  value: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../../core/db/types.js' {
  interface Database {
    workflow_variables: WorkflowVariablesTable;
  }
}

export type VariableRow = WorkflowVariablesTable;

export class VariableStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db
      .selectFrom('workflow_variables')
      .select(['id', 'key', 'value', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId);
  }

  /** Every variable of an account, as `$vars` reads them. */
  async all(accountId: string): Promise<Array<{ key: string; value: string }>> {
    return this.db
      .selectFrom('workflow_variables')
      .select(['key', 'value'])
      .where('account_id', '=', accountId)
      .execute();
  }

  async insert(row: VariableRow): Promise<void> {
    await this.db.insertInto('workflow_variables').values(row).execute();
  }

  async find(accountId: string, id: string): Promise<VariableRow | undefined> {
    return this.db
      .selectFrom('workflow_variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<VariableRow, 'key' | 'value' | 'updated_at'>>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('workflow_variables')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('workflow_variables')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
