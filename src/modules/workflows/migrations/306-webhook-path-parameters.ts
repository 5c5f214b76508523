import type { Kysely } from 'kysely';

/**
 * n8n's path parameters (`users/:id`): such a webhook is reached at `/webhook/{webhookId}/users/42`,
 * as in n8n. Its row keeps the template as `path` and its first segment (the node's webhook id) as
 * `dynamic_prefix`, the key a request's path is looked up by when no fixed path holds it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('dynamic_prefix', 'text').execute();
  await db.schema.createIndex('webhooks_dynamic_idx').on('webhooks').column('dynamic_prefix').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhooks_dynamic_idx').execute();
  await db.schema.alterTable('webhooks').dropColumn('dynamic_prefix').execute();
}
