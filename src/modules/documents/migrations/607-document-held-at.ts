import type { Kysely } from 'kysely';

/**
 * When a document's holds last changed (taken, given back, or marked -1 for deletion). A background
 * pass sets the holds of a store's documents to what its loaders name, but only for documents whose
 * holds have not moved for longer than an upload can take: an upload still loading holds a document
 * no loader names yet. A delete left at -1 is finished by a later pass the same way. Null: not changed
 * since this column came (as old as can be).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').addColumn('held_at', 'text').execute();
  // 1 when an upload that holds what it loads made the document (a store's), 0 when the documents
  // API did: an upload that fails gives a hold back on the first kind (the last one deletes it) and
  // never deletes the second, whatever order two failing uploads end in. Held ones count as the first.
  await db.schema
    .alterTable('documents')
    .addColumn('made_held', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // biome-ignore lint/suspicious/noExplicitAny: a migration names tables as they were then.
  await (db as Kysely<any>).updateTable('documents').set({ made_held: 1 }).where('holds', '>', 0).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').dropColumn('made_held').execute();
  await db.schema.alterTable('documents').dropColumn('held_at').execute();
}
