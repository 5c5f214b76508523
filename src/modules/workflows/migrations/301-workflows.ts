import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('nodes', 'text', (c) => c.notNull())
    .addColumn('connections', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('workflows_account_idx')
    .on('workflows')
    .columns(['account_id', 'id'])
    .execute();

  await db.schema
    .createTable('workflow_versions')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_versions_pk', ['workflow_id', 'version'])
    .execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('node_name', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhooks_pk', ['path', 'method'])
    .execute();
  await db.schema.createIndex('webhooks_workflow_idx').on('webhooks').column('workflow_id').execute();

  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('credentials_name_uq', ['account_id', 'name'])
    .execute();

  await db.schema
    .createTable('executions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('workflow_version', 'integer', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('finished', 'integer', (c) => c.notNull())
    .addColumn('retry_of', 'text')
    .addColumn('trigger_data', 'text', (c) => c.notNull())
    .addColumn('run_data', 'text')
    .addColumn('error_message', 'text')
    .addColumn('response', 'text')
    .addColumn('wait_till', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('stopped_at', 'text')
    .execute();
  await db.schema
    .createIndex('executions_account_idx')
    .on('executions')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema
    .createIndex('executions_workflow_idx')
    .on('executions')
    .columns(['workflow_id', 'id'])
    .execute();
  await db.schema
    .createIndex('executions_status_idx')
    .on('executions')
    .columns(['status', 'wait_till'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('node_name', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull())
    .addColumn('response', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['workflow_id', 'node_name', 'dedupe_key'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_created_idx')
    .on('webhook_deliveries')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('workflow_imports')
    .addColumn('workflow_id', 'text', (c) => c.primaryKey())
    .addColumn('imported_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'workflow_imports',
    'webhook_deliveries',
    'executions',
    'credentials',
    'webhooks',
    'workflow_versions',
    'workflows',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
