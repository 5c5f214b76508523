import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * The full-text index answers "in this account / these topics" itself (issue 31): each chunk's entry
 * also holds a token of its account and one of its account and topic (keyword-scope.ts builds the same
 * tokens for a query), so a term's matches in one topic are an index intersection instead of every
 * match of the term in the database joined to its chunk row and filtered. Existing rows are indexed
 * again here.
 *
 * SQLite: FTS5 with a second column, `scope`, contentless (the chunk row holds the terms; the index
 * reads nothing back), deletable by rowid. Tokens: `a` + hex(account), `t` + hex(account) + `x` +
 * hex(topic), hex being SQLite's own, so the triggers make them. Queries name the column (`scope :`,
 * `terms :`), so a word of a chunk never reads as a scope.
 * PostgreSQL: the generated tsvector gets two lexemes, `@a` + md5(account) and `@t` + md5(account) +
 * md5(topic); the stored terms are letters and digits only, so no word of a chunk is one of them.
 */
// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index if exists chunks_tsv_idx`.execute(db);
    await sql`alter table chunks drop column if exists tsv`.execute(db);
    await sql`alter table chunks add column tsv tsvector generated always as (
      to_tsvector('simple', terms) || array_to_tsvector(array['@a' || md5(account_id), '@t' || md5(account_id) || md5(topic)])
    ) stored`.execute(db);
    await sql`create index chunks_tsv_idx on chunks using gin (tsv)`.execute(db);
    // The table was rewritten: without statistics the planner would not use the new index.
    await sql`analyze chunks`.execute(db);
    return;
  }
  const scope = (row: 'new' | 'chunks') =>
    sql.raw(`'a' || hex(${row}.account_id) || ' t' || hex(${row}.account_id) || 'x' || hex(${row}.topic)`);
  await sql`drop trigger if exists chunks_fts_insert`.execute(db);
  await sql`drop trigger if exists chunks_fts_delete`.execute(db);
  await sql`drop table if exists chunks_fts`.execute(db);
  await sql`create virtual table chunks_fts using fts5(terms, scope, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`.execute(
    db,
  );
  await sql`insert into chunks_fts(rowid, terms, scope) select chunks.rowid, chunks.terms, ${scope('chunks')} from chunks`.execute(
    db,
  );
  await sql`create trigger chunks_fts_insert after insert on chunks begin
    insert into chunks_fts(rowid, terms, scope) values (new.rowid, new.terms, ${scope('new')}); end`.execute(
    db,
  );
  await sql`create trigger chunks_fts_delete after delete on chunks begin
    delete from chunks_fts where rowid = old.rowid; end`.execute(db);
  // Nothing updates these columns today; if something does, the index follows.
  await sql`create trigger chunks_fts_update after update of terms, account_id, topic on chunks begin
    delete from chunks_fts where rowid = old.rowid;
    insert into chunks_fts(rowid, terms, scope) values (new.rowid, new.terms, ${scope('new')}); end`.execute(
    db,
  );
}

/** Back to 601's indexes (the terms alone), rebuilt from the chunk rows. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index if exists chunks_tsv_idx`.execute(db);
    await sql`alter table chunks drop column if exists tsv`.execute(db);
    await sql`alter table chunks add column tsv tsvector generated always as (to_tsvector('simple', terms)) stored`.execute(
      db,
    );
    await sql`create index chunks_tsv_idx on chunks using gin (tsv)`.execute(db);
    await sql`analyze chunks`.execute(db);
    return;
  }
  await sql`drop trigger if exists chunks_fts_update`.execute(db);
  await sql`drop trigger if exists chunks_fts_insert`.execute(db);
  await sql`drop trigger if exists chunks_fts_delete`.execute(db);
  await sql`drop table if exists chunks_fts`.execute(db);
  await sql`create virtual table chunks_fts using fts5(terms, content='chunks', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(
    db,
  );
  await sql`insert into chunks_fts(chunks_fts) values ('rebuild')`.execute(db);
  await sql`create trigger chunks_fts_insert after insert on chunks begin insert into chunks_fts(rowid, terms) values (new.rowid, new.terms); end`.execute(
    db,
  );
  await sql`create trigger chunks_fts_delete after delete on chunks begin insert into chunks_fts(chunks_fts, rowid, terms) values ('delete', old.rowid, old.terms); end`.execute(
    db,
  );
}
