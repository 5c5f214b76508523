import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Flowise's small records (tools, variables, assistants, feedback, leads, upsert history), each a
  // JSON body of its kind: read whole, listed by account, kind and (for the per-flow ones) flow.
  await db.schema
    .createTable('flowise_objects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('flow_id', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('flowise_objects_kind_idx')
    .on('flowise_objects')
    .columns(['account_id', 'kind', 'flow_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('flowise_objects').execute();
}
