import type { Kysely } from 'kysely';

/**
 * A document's revision: set each time it becomes searchable (indexed), above every revision of its
 * topic, so a document indexed again reads as changed to every process's knowledge cache even when its
 * `updated_at`, chunk count and model are what they were (the same millisecond, or a clock that stands
 * still): before it, another process kept searching the chunk ids it had replaced, and found nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('documents')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').dropColumn('revision').execute();
}
