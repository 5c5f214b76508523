import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Made models belong to the account that made them (docs/decisions.md, "Made models belong to their
 * account"): `llm_models` is rebuilt keyed by (account, name). Rows made before have no known maker:
 * they keep account '' (the instance's: every account sees them, none changes them). Blobs too are
 * an account's from now (bounded per account); those kept before are dropped (no create reads them).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable('llm_blobs').execute();
  await db.schema
    .createTable('llm_blobs')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('data', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('llm_blobs_account_digest', ['account_id', 'digest'])
    .execute();
  await db.schema
    .createTable('llm_models_by_account')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('llm_models_account_name', ['account_id', 'name'])
    .execute();
  await sql`insert into llm_models_by_account (account_id, name, spec, created_at)
    select '', name, spec, created_at from llm_models`.execute(db);
  await db.schema.dropTable('llm_models').execute();
  await db.schema.alterTable('llm_models_by_account').renameTo('llm_models').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropTable('llm_blobs').execute();
  await db.schema
    .createTable('llm_blobs')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('data', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('llm_models_by_name')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into llm_models_by_name (name, spec, created_at)
    select name, spec, created_at from llm_models where account_id = ''`.execute(db);
  await db.schema.dropTable('llm_models').execute();
  await db.schema.alterTable('llm_models_by_name').renameTo('llm_models').execute();
}
