import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // When the first undecided approval of a paused run expires (ISO time); null: none waits.
  await db.schema.alterTable('agent_runs').addColumn('approval_deadline', 'text').execute();
  await db.schema
    .createIndex('agent_runs_approval_deadline_idx')
    .on('agent_runs')
    .columns(['approval_deadline'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('agent_runs_approval_deadline_idx').execute();
  await db.schema.alterTable('agent_runs').dropColumn('approval_deadline').execute();
}
