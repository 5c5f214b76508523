import type { Kysely, Updateable } from 'kysely';
import type { Database } from '../../../core/db/types.js';
import type { LlmBatchesTable } from '../tables.js';

/** The SQL of `/v1/batches`: reads name the account; the runner updates by id. */
export class BatchStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: LlmBatchesTable): Promise<void> {
    await this.db.insertInto('llm_batches').values(row).execute();
  }

  async get(accountId: string, id: string): Promise<LlmBatchesTable | undefined> {
    return this.db
      .selectFrom('llm_batches')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async status(id: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('llm_batches')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.status;
  }

  /** Newest first unless `order` is `asc` (ids are ULIDs), one more than `limit` to tell `has_more`. */
  async list(
    accountId: string,
    options: { limit: number; after?: string; order?: 'asc' | 'desc' },
  ): Promise<LlmBatchesTable[]> {
    const order = options.order ?? 'desc';
    let q = this.db.selectFrom('llm_batches').selectAll().where('account_id', '=', accountId);
    if (options.after) q = q.where('id', order === 'asc' ? '>' : '<', options.after);
    return q
      .orderBy('id', order)
      .limit(options.limit + 1)
      .execute();
  }

  async update(id: string, values: Updateable<LlmBatchesTable>): Promise<void> {
    await this.db.updateTable('llm_batches').set(values).where('id', '=', id).execute();
  }

  /**
   * Moves a batch from one of `from` to `to` (with `values`); false when it was in none of them —
   * how a cancel and the runner agree on who moved it last.
   */
  async transition(
    id: string,
    from: readonly string[],
    values: Updateable<LlmBatchesTable> & { status: string },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('llm_batches')
      .set(values)
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Batches a stopped process left unfinished (queued again at boot). */
  async unfinished(): Promise<Array<{ id: string; account_id: string }>> {
    return this.db
      .selectFrom('llm_batches')
      .select(['id', 'account_id'])
      .where('status', 'in', ['validating', 'in_progress', 'finalizing', 'cancelling'])
      .execute();
  }
}
