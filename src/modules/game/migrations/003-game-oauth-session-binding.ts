import type { Kysely } from 'kysely';

/**
 * A flow may be bound to the integration's own user session: the state keeps the hash of a secret
 * that session holds and where to send the browser back; the callback then parks the grant in a
 * completion that only that session's secret turns into a connection.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('game_oauth_states').addColumn('session_binding', 'text').execute();
  await db.schema.alterTable('game_oauth_states').addColumn('return_url', 'text').execute();
  await db.schema
    .createTable('game_oauth_completions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('session_binding', 'text', (c) => c.notNull())
    .addColumn('tokens', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('game_oauth_completions_expires_idx')
    .on('game_oauth_completions')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('game_oauth_completions').execute();
  await db.schema.alterTable('game_oauth_states').dropColumn('return_url').execute();
  await db.schema.alterTable('game_oauth_states').dropColumn('session_binding').execute();
}
