import { type Kysely, PostgresAdapter } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // OpenAI's /v1/files: an account's uploads (batch inputs, user data) and the batches' output files.
  await db.schema
    .createTable('llm_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('data', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('llm_files_account').on('llm_files').columns(['account_id', 'id']).execute();
  // OpenAI's /v1/batches: one row per batch, its progress and the files it made.
  await db.schema
    .createTable('llm_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text', (c) => c.notNull())
    .addColumn('completion_window', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('errors', 'text')
    .addColumn('metadata', 'text')
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('completed', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('in_progress_at', 'integer')
    .addColumn('finalizing_at', 'integer')
    .addColumn('completed_at', 'integer')
    .addColumn('failed_at', 'integer')
    .addColumn('cancelling_at', 'integer')
    .addColumn('cancelled_at', 'integer')
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('llm_batches_account')
    .on('llm_batches')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema.createIndex('llm_batches_status').on('llm_batches').column('status').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('llm_batches').ifExists().execute();
  await db.schema.dropTable('llm_files').ifExists().execute();
}
