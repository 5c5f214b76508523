import type { Kysely } from 'kysely';

/**
 * The language a document's chunks were indexed in (their stored terms are stemmed in it). Documents
 * processed before stemming hold words as written: `none`, and queries still find them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('documents')
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('none'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('documents').dropColumn('language').execute();
}
