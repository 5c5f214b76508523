import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * A chunk's vector goes with its chunk: `chunk_vectors.chunk_id` references `chunks.id`, on delete
 * cascade. Nothing tied them before, so an embedding batch that committed while its document was being
 * deleted left vectors no chunk had (the delete removed the vectors it saw, then the chunks): space
 * that nothing read or freed. Such vectors go first. SQLite adds a constraint only by building the
 * table again; PostgreSQL checks the existing rows when it adds it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const orphans = sql`delete from chunk_vectors where not exists (select 1 from chunks where chunks.id = chunk_vectors.chunk_id)`;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The migrator runs PostgreSQL's migrations in a transaction.
    await orphans.execute(db);
    await sql`alter table chunk_vectors add constraint chunk_vectors_chunk_fk foreign key (chunk_id) references chunks (id) on delete cascade`.execute(
      db,
    );
    return;
  }
  // SQLite's are not (Kysely runs each statement alone): a copy that fails (a full disk) or a process
  // stopped between the drop and the rename must leave the table as it was, for the next start.
  await db.transaction().execute(async (trx) => {
    await orphans.execute(trx);
    await rebuild(trx, true);
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table chunk_vectors drop constraint chunk_vectors_chunk_fk`.execute(db);
    return;
  }
  await db.transaction().execute((trx) => rebuild(trx, false));
}

/** SQLite: `chunk_vectors` again, with or without the reference to its chunk, its rows and index kept. */
async function rebuild(db: Kysely<unknown>, owned: boolean): Promise<void> {
  await db.schema
    .createTable('chunk_vectors_next')
    .addColumn('chunk_id', 'text', (c) =>
      owned ? c.primaryKey().references('chunks.id').onDelete('cascade') : c.primaryKey(),
    )
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('embedding', 'blob', (c) => c.notNull())
    .execute();
  await sql`insert into chunk_vectors_next (chunk_id, document_id, embedding)
    select chunk_id, document_id, embedding from chunk_vectors`.execute(db);
  await db.schema.dropTable('chunk_vectors').execute();
  await db.schema.alterTable('chunk_vectors_next').renameTo('chunk_vectors').execute();
  await db.schema
    .createIndex('chunk_vectors_document_idx')
    .on('chunk_vectors')
    .column('document_id')
    .execute();
}
