import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('game_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('membership_id', 'text', (c) => c.notNull())
    .addColumn('access_token', 'text', (c) => c.notNull())
    .addColumn('access_expires_at', 'text', (c) => c.notNull())
    .addColumn('refresh_token', 'text')
    .addColumn('refresh_expires_at', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('game_connections_owner_uq', ['account_id', 'customer_id'])
    .execute();

  await db.schema
    .createTable('game_oauth_states')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('game_oauth_states_expires_idx')
    .on('game_oauth_states')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('game_manifests')
    .addColumn('game', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('game_manifests_pk', ['game', 'version'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('game_manifests').execute();
  await db.schema.dropTable('game_oauth_states').execute();
  await db.schema.dropTable('game_connections').execute();
}
