import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('title', 'text')
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('char_count', 'integer', (c) => c.notNull())
    .addColumn('page_count', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('chunk_count', 'integer', (c) => c.notNull())
    .addColumn('embedding_model', 'text')
    // The parameters of a queued or running processing job (JSON), until it ends: re-queued after a crash.
    .addColumn('processing', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // The same content in the same topic is one document.
    .addUniqueConstraint('documents_content_uq', ['account_id', 'topic', 'content_hash'])
    .execute();
  await db.schema
    .createIndex('documents_account_idx')
    .on('documents')
    .columns(['account_id', 'id'])
    .execute();

  await db.schema
    .createTable('document_pages')
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('page_number', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('document_pages_pk', ['document_id', 'page_number'])
    .execute();

  await db.schema
    .createTable('chunks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('chunk_index', 'integer', (c) => c.notNull())
    .addColumn('page_number', 'integer', (c) => c.notNull())
    .addColumn('start_offset', 'integer', (c) => c.notNull())
    .addColumn('end_offset', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    // The chunk's words as the service tokenizes them, space-separated: both full-text indexes read
    // this column, so SQLite and PostgreSQL find the same chunks for the same terms.
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('embedding_model', 'text')
    .execute();
  // Vectors apart from the chunk rows: a keyword search reading chunks never pages 1.5 KB blobs in.
  await db.schema
    .createTable('chunk_vectors')
    .addColumn('chunk_id', 'text', (c) => c.primaryKey())
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('embedding', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('chunk_vectors_document_idx')
    .on('chunk_vectors')
    .column('document_id')
    .execute();
  await db.schema
    .createIndex('chunks_document_idx')
    .on('chunks')
    .columns(['document_id', 'chunk_index'])
    .execute();
  await db.schema.createIndex('chunks_topic_idx').on('chunks').columns(['account_id', 'topic']).execute();

  if (postgres) {
    // Full-text search: a generated tsvector ('simple': no stemming, the same words as SQLite's FTS5).
    await sql`alter table chunks add column tsv tsvector generated always as (to_tsvector('simple', terms)) stored`.execute(
      db,
    );
    await sql`create index chunks_tsv_idx on chunks using gin (tsv)`.execute(db);
  } else {
    // FTS5 over the chunk text, kept in step by the store (rowid = the chunk's row).
    await sql`create virtual table chunks_fts using fts5(terms, content='chunks', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(
      db,
    );
    await sql`create trigger chunks_fts_insert after insert on chunks begin insert into chunks_fts(rowid, terms) values (new.rowid, new.terms); end`.execute(
      db,
    );
    await sql`create trigger chunks_fts_delete after delete on chunks begin insert into chunks_fts(chunks_fts, rowid, terms) values ('delete', old.rowid, old.terms); end`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await sql`drop trigger if exists chunks_fts_delete`.execute(db);
    await sql`drop trigger if exists chunks_fts_insert`.execute(db);
    await sql`drop table if exists chunks_fts`.execute(db);
  }
  await db.schema.dropTable('chunk_vectors').execute();
  await db.schema.dropTable('chunks').execute();
  await db.schema.dropTable('document_pages').execute();
  await db.schema.dropTable('documents').execute();
}
