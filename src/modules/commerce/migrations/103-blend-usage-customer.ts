import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Whose order used the blend: `usedIn` shows a reader only their own orders. Rows from before
  // stay null (no one's): they count in `usageCount` but are listed to no one.
  await db.schema.alterTable('blend_usage').addColumn('customer_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('blend_usage').dropColumn('customer_id').execute();
}
