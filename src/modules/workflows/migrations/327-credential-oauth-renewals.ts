import type { Kysely } from 'kysely';

/**
 * Who is renewing an OAuth2 credential's token right now, across processes: one row per credential
 * while a process holds the renewal (a lease with an end, so a process that died does not hold it
 * for ever). Another process that finds the row waits for the token instead of spending the same
 * refresh token a second time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credential_oauth_renewals')
    .addColumn('credential_id', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credential_oauth_renewals').execute();
}
