import type { Kysely } from 'kysely';

/**
 * Executions each account started per UTC day, for the daily execution quota (execution-quota.ts).
 * One row per account and day, raised by a conditional upsert, so N allowed means exactly N.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_execution_counts')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_execution_counts_pk', ['account_id', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_execution_counts').execute();
}
