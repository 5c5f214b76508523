import type { Kysely } from 'kysely';

/**
 * n8n's archived workflows (`POST /workflows/{id}/archive`): a soft delete. An archived workflow is
 * inactive, keeps its executions and versions, and is neither changed, activated nor run until
 * unarchived.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('workflows')
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workflows').dropColumn('archived').execute();
}
