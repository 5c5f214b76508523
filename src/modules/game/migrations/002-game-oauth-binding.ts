import type { Kysely } from 'kysely';

/**
 * OAuth states bound to the browser and carrying a PKCE verifier. Pending states live ten
 * minutes and cannot be completed without the new columns, so the table is recreated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('game_oauth_states').execute();
  await db.schema
    .createTable('game_oauth_states')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('ticket_hash', 'text', (c) => c.unique())
    .addColumn('browser_hash', 'text')
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('game_oauth_states_expires_idx')
    .on('game_oauth_states')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('game_oauth_states').execute();
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
}
