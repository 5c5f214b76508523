import type { Kysely } from 'kysely';

/**
 * Schedule Trigger rules of active workflows with their next fire time. A fire is claimed by moving
 * `next_fire_at` on with a compare-and-set, so one process of any number starts it (schedule/scheduler.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_schedules')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('node_name', 'text', (c) => c.notNull())
    .addColumn('rule_index', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('next_fire_at', 'text', (c) => c.notNull())
    .addColumn('last_fire_at', 'text')
    .addPrimaryKeyConstraint('workflow_schedules_pk', ['workflow_id', 'node_name', 'rule_index'])
    .execute();
  await db.schema
    .createIndex('workflow_schedules_due_idx')
    .on('workflow_schedules')
    .column('next_fire_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_schedules').execute();
}
