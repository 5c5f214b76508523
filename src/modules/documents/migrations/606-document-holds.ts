import type { Kysely } from 'kysely';

/**
 * A document's holds: how many references another module placed on it (a Flowise store's loaders),
 * or -1 once it is being deleted. Documents of one content are shared in a topic, so a reference
 * dropped must not delete a document another upload found by its content and is about to save: the
 * last release deletes it, and an upload finding a document being deleted does not take it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('documents')
    .addColumn('holds', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').dropColumn('holds').execute();
}
