import type { Kysely } from 'kysely';

/**
 * n8n's tags, per account. A workflow keeps the names of its tags (migration 303); this table holds
 * every tag of the account with its timestamps, also the ones no workflow carries yet. A tag's id is
 * derived from its name (definitions.ts `tagIdOf`), so the id a workflow shows is the table's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_tags')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_tags_pk', ['account_id', 'id'])
    .addUniqueConstraint('workflow_tags_name_uq', ['account_id', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_tags').execute();
}
