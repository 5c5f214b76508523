import type { Kysely } from 'kysely';

/**
 * Pending OAuth2 consents of credentials (authorization code, PKCE): one row per flow, started by a
 * principal who may change the credential, claimed once by a browser (its cookie's hash), used once
 * by the callback (deleted then, whatever the outcome), and gone after its expiry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credential_oauth_states')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('ticket_hash', 'text')
    .addColumn('browser_hash', 'text')
    .addColumn('state_hash', 'text')
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('credential_oauth_states_ticket_idx')
    .on('credential_oauth_states')
    .column('ticket_hash')
    .execute();
  await db.schema
    .createIndex('credential_oauth_states_expiry_idx')
    .on('credential_oauth_states')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credential_oauth_states').execute();
}
