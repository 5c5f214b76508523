import type { Kysely } from 'kysely';

/**
 * n8n's test webhooks: after `POST /api/v1/workflows/{id}/listen` the workflow's webhook paths answer
 * at `/webhook-test/{path}` for one call or until `expires_at`, active or not. In the database, so the
 * call may reach any API process; the call claims them by deleting the workflow's rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_test_webhooks')
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('node_name', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('dynamic_prefix', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_test_webhooks_pk', ['path', 'method'])
    .execute();
  await db.schema
    .createIndex('workflow_test_webhooks_workflow_idx')
    .on('workflow_test_webhooks')
    .column('workflow_id')
    .execute();
  await db.schema
    .createIndex('workflow_test_webhooks_dynamic_idx')
    .on('workflow_test_webhooks')
    .column('dynamic_prefix')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_test_webhooks').execute();
}
