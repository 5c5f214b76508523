import { type Kysely, PostgresAdapter } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Back-to-back reservations of a cart: how many in the current run, and until when another one
  // continues that run (the last expiry plus one TTL). Bounds how long one cart can hoard stock.
  await db.schema
    .alterTable('carts')
    .addColumn('hold_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('carts').addColumn('hold_run_until', 'text').execute();
  // An order total may pass 2^31 minor units (a price may have 9 digits); SQLite integers are
  // already 64-bit.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema
      .alterTable('orders')
      .alterColumn('total', (c) => c.setDataType('bigint'))
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema
      .alterTable('orders')
      .alterColumn('total', (c) => c.setDataType('integer'))
      .execute();
  }
  await db.schema.alterTable('carts').dropColumn('hold_run_until').execute();
  await db.schema.alterTable('carts').dropColumn('hold_count').execute();
}
