import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_profiles')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('preferences', 'text', (c) => c.notNull())
    .addColumn('registration_source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // One profile per user of an account: a registration repeated (or sent twice at once) finds it.
    .addPrimaryKeyConstraint('user_profiles_pk', ['account_id', 'user_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('user_profiles').execute();
}
