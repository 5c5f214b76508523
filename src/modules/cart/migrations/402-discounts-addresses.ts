import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('discount_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('code_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'integer', (c) => c.notNull())
    .addColumn('min_subtotal', 'integer', (c) => c.notNull())
    .addColumn('starts_at', 'text')
    .addColumn('ends_at', 'text')
    .addColumn('usage_limit', 'integer')
    .addColumn('used_count', 'integer', (c) => c.notNull())
    .addColumn('stackable', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('discount_codes_key_uq', ['account_id', 'code_key'])
    .execute();
  await db.schema
    .createTable('cart_discounts')
    .addColumn('cart_id', 'text', (c) => c.notNull().references('carts.id').onDelete('cascade'))
    .addColumn('discount_id', 'text', (c) => c.notNull().references('discount_codes.id').onDelete('cascade'))
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('cart_discounts_pk', ['cart_id', 'discount_id'])
    .execute();
  for (const column of ['ship_country', 'ship_state', 'ship_postal']) {
    await db.schema.alterTable('carts').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['ship_country', 'ship_state', 'ship_postal']) {
    await db.schema.alterTable('carts').dropColumn(column).execute();
  }
  await db.schema.dropTable('cart_discounts').execute();
  await db.schema.dropTable('discount_codes').execute();
}
