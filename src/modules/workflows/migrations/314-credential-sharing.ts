import type { Kysely } from 'kysely';

/**
 * n8n's sharing model for credentials: a credential is owned by who created it (`key:<id>`,
 * `member:<id>`, or `account` for the operator and for every credential made before this), and is
 * shared with other principals of its account. A workflow acts as whoever saved its current version
 * (`saved_by`; `account` when that principal could use every credential, and for existing workflows),
 * so nothing that ran before stops working.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('credentials')
    .addColumn('owner', 'text', (c) => c.notNull().defaultTo('account'))
    .execute();
  await db.schema
    .alterTable('workflows')
    .addColumn('saved_by', 'text', (c) => c.notNull().defaultTo('account'))
    .execute();
  await db.schema
    .createTable('credential_shares')
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('principal', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('credential_shares_pk', ['credential_id', 'principal'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credential_shares').execute();
  await db.schema.alterTable('workflows').dropColumn('saved_by').execute();
  await db.schema.alterTable('credentials').dropColumn('owner').execute();
}
