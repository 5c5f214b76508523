import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('blends')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull())
    .addColumn('base_intensity', 'text', (c) => c.notNull())
    .addColumn('occasions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('blends_owner_name_key', ['account_id', 'owner', 'name_key'])
    .execute();
  await db.schema
    .createIndex('blends_owner_idx')
    .on('blends')
    .columns(['account_id', 'owner', 'id'])
    .execute();

  await db.schema
    .createTable('blend_usage')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('blend_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('product_name', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('order_date', 'text', (c) => c.notNull())
    .addUniqueConstraint('blend_usage_once', ['blend_id', 'order_id', 'product_id'])
    .execute();
  await db.schema
    .createIndex('blend_usage_blend_idx')
    .on('blend_usage')
    .columns(['blend_id', 'order_date'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('blend_usage').execute();
  await db.schema.dropTable('blends').execute();
}
