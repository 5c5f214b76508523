import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * n8n's workflow-level fields (issue 17): tags (names, JSON), pinned data, static data, meta and
 * the version id n8n changes on every save. Node-level fields live in the nodes JSON already.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('workflows')
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  for (const column of ['pin_data', 'static_data', 'meta']) {
    await db.schema.alterTable('workflows').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('workflows')
    .addColumn('version_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  // Existing workflows get a version id of their own, as a save would give them.
  const raw = db as unknown as Kysely<{ workflows: { id: string; version_id: string } }>;
  const rows = await raw.selectFrom('workflows').select('id').execute();
  for (const row of rows) {
    await raw.updateTable('workflows').set({ version_id: randomUUID() }).where('id', '=', row.id).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['version_id', 'meta', 'static_data', 'pin_data', 'tags']) {
    await db.schema.alterTable('workflows').dropColumn(column).execute();
  }
}
