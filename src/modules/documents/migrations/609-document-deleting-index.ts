import { type Kysely, sql } from 'kysely';

/**
 * The documents being deleted (holds -1), found without reading the table: the sweep that finishes
 * stopped deletes asks for them every five minutes, and on SQLite a full scan of a large table held
 * every request for its length. Partial, in id order (the order the sweep reads them in): only the
 * few rows being deleted are in it. Queries name the predicate literally (`holds < 0`), as both
 * databases use a partial index only for a condition they can see implies it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index documents_deleting_idx on documents (id) where holds < 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index documents_deleting_idx`.execute(db);
}
