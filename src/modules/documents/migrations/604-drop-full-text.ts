import { type Kysely, PostgresAdapter, sql } from 'kysely';
import * as m603 from './603-keyword-scope.js';

/**
 * The full-text indexes go (issue 31): keyword search ranks over the in-process keyword index
 * (keyword-index.ts), built from the stored terms, so FTS5 on SQLite and the tsvector column with its
 * GIN index on PostgreSQL were written at every ingest and read by nothing. `down` builds 603's again.
 */
// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index if exists chunks_tsv_idx`.execute(db);
    await sql`alter table chunks drop column if exists tsv`.execute(db);
    return;
  }
  await sql`drop trigger if exists chunks_fts_update`.execute(db);
  await sql`drop trigger if exists chunks_fts_insert`.execute(db);
  await sql`drop trigger if exists chunks_fts_delete`.execute(db);
  await sql`drop table if exists chunks_fts`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await m603.up(db);
}
