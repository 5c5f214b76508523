import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('llm_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('answered_by', 'text')
    .addColumn('provider', 'text')
    .addColumn('stream', 'integer', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('tokens_estimated', 'integer', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('ttft_ms', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('cached', 'integer', (c) => c.notNull())
    .addColumn('fallbacks_tried', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // Lists page newest first by id within an account; ids are time-sortable.
  await db.schema
    .createIndex('llm_requests_account_idx')
    .on('llm_requests')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema.createIndex('llm_requests_created_idx').on('llm_requests').column('created_at').execute();

  await db.schema
    .createTable('llm_usage_daily')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('estimated_requests', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('llm_usage_daily_pk', ['key_id', 'day', 'model'])
    .execute();
  await db.schema
    .createIndex('llm_usage_daily_account_idx')
    .on('llm_usage_daily')
    .columns(['account_id', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('llm_usage_daily').execute();
  await db.schema.dropTable('llm_requests').execute();
}
