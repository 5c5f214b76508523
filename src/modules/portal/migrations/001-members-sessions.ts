import type { Kysely } from 'kysely';
import { newId } from '../../../core/ids.js';

/** The tables as this migration knows them (migrations must not depend on today's table types). */
interface Then {
  accounts: { id: string; email: string; name: string };
  members: {
    id: string;
    account_id: string;
    email: string;
    name: string;
    role: string;
    password_hash: string | null;
    created_at: string;
    updated_at: string;
  };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('members_account_idx').on('members').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('member_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_member_idx').on('sessions').columns(['member_id', 'id']).execute();
  await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('member_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema
    .createIndex('member_tokens_email_idx')
    .on('member_tokens')
    .columns(['email', 'kind'])
    .execute();

  // Every account made before members existed gets its owner, by the account's email (no password
  // yet: `platform users setup-link EMAIL` makes the link that sets it).
  const raw = db as unknown as Kysely<Then>;
  const accounts = await raw.selectFrom('accounts').select(['id', 'email', 'name']).orderBy('id').execute();
  const now = new Date().toISOString();
  const taken = new Set<string>();
  for (const account of accounts) {
    const email = account.email.trim().toLowerCase();
    if (taken.has(email)) continue;
    taken.add(email);
    await raw
      .insertInto('members')
      .values({
        id: newId('mem'),
        account_id: account.id,
        email,
        name: account.name,
        role: 'owner',
        password_hash: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('member_tokens').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('members').execute();
}
