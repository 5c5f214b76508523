import type { Kysely } from 'kysely';

/** n8n's variables (`$vars`), per account: a key is unique within its account. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_variables')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('workflow_variables_key_uq', ['account_id', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_variables').execute();
}
