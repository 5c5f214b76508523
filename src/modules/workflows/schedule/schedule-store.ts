import type { Transaction } from 'kysely';
import type { Db } from '../../../core/db/database.js';
import type { Database } from '../../../core/db/types.js';
import type { WorkflowSchedulesTable } from '../tables.js';

export type ScheduleRow = WorkflowSchedulesTable;

/** Schedule rules of active workflows and their next fire times. */
export class ScheduleStore {
  constructor(private readonly db: Db) {}

  async replace(trx: Transaction<Database>, workflowId: string, rows: ScheduleRow[]): Promise<void> {
    await trx.deleteFrom('workflow_schedules').where('workflow_id', '=', workflowId).execute();
    if (rows.length > 0) await trx.insertInto('workflow_schedules').values(rows).execute();
  }

  /** Rules an account's active workflows hold, besides those of `exceptWorkflowId`. */
  async countOf(trx: Transaction<Database>, accountId: string, exceptWorkflowId: string): Promise<number> {
    const row = await trx
      .selectFrom('workflow_schedules')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .where('workflow_id', '!=', exceptWorkflowId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async clear(trx: Transaction<Database>, workflowId: string): Promise<void> {
    await trx.deleteFrom('workflow_schedules').where('workflow_id', '=', workflowId).execute();
  }

  async due(at: string, limit: number): Promise<ScheduleRow[]> {
    return this.db
      .selectFrom('workflow_schedules')
      .selectAll()
      .where('next_fire_at', '<=', at)
      .orderBy('next_fire_at')
      .limit(limit)
      .execute();
  }

  async earliest(): Promise<string | null> {
    const row = await this.db
      .selectFrom('workflow_schedules')
      .select((eb) => eb.fn.min('next_fire_at').as('at'))
      .executeTakeFirst();
    return (row?.at as string | null | undefined) ?? null;
  }

  /**
   * Moves a rule on from the fire time it was read with; true for the one caller whose update found
   * that time still there (every other process read the same row and loses). No next time: the row goes.
   */
  async claim(row: ScheduleRow, next: string | null): Promise<boolean> {
    const where = this.db
      .updateTable('workflow_schedules')
      .where('workflow_id', '=', row.workflow_id)
      .where('node_name', '=', row.node_name)
      .where('rule_index', '=', row.rule_index)
      .where('next_fire_at', '=', row.next_fire_at);
    if (next === null) {
      const gone = await this.db
        .deleteFrom('workflow_schedules')
        .where('workflow_id', '=', row.workflow_id)
        .where('node_name', '=', row.node_name)
        .where('rule_index', '=', row.rule_index)
        .where('next_fire_at', '=', row.next_fire_at)
        .executeTakeFirst();
      return Number(gone.numDeletedRows) === 1;
    }
    const moved = await where.set({ next_fire_at: next, last_fire_at: row.next_fire_at }).executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }
}
