import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // 1: the run is a job of the queue (`background: true`); 0: its caller drives it.
  await db.schema
    .alterTable('agent_runs')
    .addColumn('background', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Times a worker took the run up: a second take-up means the first worker died mid-run.
  await db.schema
    .alterTable('agent_runs')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Who started it (JSON, no secrets): a worker runs it as them, after a restart too.
  await db.schema.alterTable('agent_runs').addColumn('principal', 'text').execute();
  await db.schema
    .createIndex('agent_runs_unfinished_idx')
    .on('agent_runs')
    .columns(['background', 'status'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('agent_runs_unfinished_idx').execute();
  await db.schema.alterTable('agent_runs').dropColumn('principal').execute();
  await db.schema.alterTable('agent_runs').dropColumn('attempts').execute();
  await db.schema.alterTable('agent_runs').dropColumn('background').execute();
}
