import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import type { Dialect } from '../../src/core/db/types.js';
import * as m608 from '../../src/modules/documents/migrations/608-chunk-vector-owner.js';
import { documentsMigrations } from '../../src/modules/documents/migrations/index.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import type { ChunksTable, DocumentsTable } from '../../src/modules/documents/tables.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';

const BEFORE_608 = Object.fromEntries(
  Object.entries(documentsMigrations).filter(([name]) => name < '20261202_608'),
);

const document = (id: string): DocumentsTable => ({
  id,
  account_id: 'acct-a',
  topic: 'kb',
  source: 'text',
  url: null,
  title: id,
  mime_type: 'text/plain',
  content_hash: id,
  char_count: 10,
  page_count: 1,
  metadata: '{}',
  status: 'chunked',
  error: null,
  chunk_count: 2,
  embedding_model: null,
  language: 'none',
  processing: null,
  revision: 0,
  holds: 0,
  held_at: null,
  made_held: 0,
  created_at: '2026-12-02T00:00:00.000Z',
  updated_at: '2026-12-02T00:00:00.000Z',
});

const chunk = (documentId: string, index: number): ChunksTable => ({
  id: `${documentId}-${index}`,
  document_id: documentId,
  account_id: 'acct-a',
  topic: 'kb',
  chunk_index: index,
  page_number: 1,
  start_offset: 0,
  end_offset: 4,
  text: 'word',
  terms: 'word',
  embedding_model: null,
});

const vector = (id: string) => ({ id, embedding: Buffer.from(new Float32Array([1, 0]).buffer) });

describe.each(await testDialects())(
  'a chunk vector belongs to its chunk (migration 608), on %s',
  (dialect: Dialect) => {
    const handles: DatabaseHandle[] = [];
    const schemas: string[] = [];
    afterAll(async () => {
      const [first] = handles;
      if (first && dialect === 'postgres')
        for (const schema of schemas)
          await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(first.db);
      for (const h of handles) await h.close();
    });

    async function open(): Promise<DatabaseHandle> {
      const schema = uniqueName('chunkvec');
      schemas.push(schema);
      const handle = await openDatabase(
        dialect === 'postgres'
          ? { databaseUrl: PG_URL, dataDir: ':memory:', pgSchema: schema, pgPoolSize: 2 }
          : { databaseUrl: '', dataDir: ':memory:' },
      );
      handles.push(handle);
      return handle;
    }

    const vectorIds = async (db: DatabaseHandle['db']) =>
      (await db.selectFrom('chunk_vectors').select('chunk_id').orderBy('chunk_id').execute()).map(
        (r) => r.chunk_id,
      );

    async function addDocument(store: DocumentStore, id: string): Promise<void> {
      await store.insert(document(id), [{ document_id: id, page_number: 1, text: 'word word' }]);
      await store.insertChunks(2, (i) => chunk(id, i));
    }

    it('drops vectors without a chunk, keeps the rest with their index, and down gives the old table back', async () => {
      const { db } = await open();
      await migrateToLatest(db, BEFORE_608);
      const store = new DocumentStore(db, dialect);
      await addDocument(store, 'doc-1');
      await store.setEmbeddings('doc-1', 'm', [vector('doc-1-0'), vector('doc-1-1')], {});
      // What a delete racing an embedding batch left before: vectors whose chunk is gone.
      await db
        .insertInto('chunk_vectors')
        .values([
          { chunk_id: 'gone-0', document_id: 'gone', embedding: Buffer.from([1]) },
          { chunk_id: 'gone-1', document_id: 'doc-1', embedding: Buffer.from([1]) },
        ])
        .execute();

      expect((await migrateToLatest(db, documentsMigrations)).map((r) => r.migrationName)).toEqual([
        '20261202_608_chunk_vector_owner',
        '20261202_609_document_deleting_index',
      ]);
      expect(await vectorIds(db)).toEqual(['doc-1-0', 'doc-1-1']);
      const kept = await db
        .selectFrom('chunk_vectors')
        .select('embedding')
        .where('chunk_id', '=', 'doc-1-0')
        .executeTakeFirstOrThrow();
      expect(Buffer.from(kept.embedding)).toEqual(vector('doc-1-0').embedding);
      // The document's index is there again (the vector cache reads vectors by document).
      const indexes =
        dialect === 'sqlite'
          ? await sql<{
              name: string;
            }>`select name from sqlite_master where type = 'index' and tbl_name = 'chunk_vectors'`.execute(db)
          : await sql<{
              name: string;
            }>`select indexname as name from pg_indexes where tablename = 'chunk_vectors' and schemaname = current_schema()`.execute(
              db,
            );
      expect(indexes.rows.map((r) => r.name)).toContain('chunk_vectors_document_idx');

      // Down: a vector may name a missing chunk again; up again drops it.
      await m608.down(db as never);
      await db
        .insertInto('chunk_vectors')
        .values({ chunk_id: 'gone-2', document_id: 'gone', embedding: Buffer.from([1]) })
        .execute();
      expect(await vectorIds(db)).toEqual(['doc-1-0', 'doc-1-1', 'gone-2']);
      if (dialect === 'sqlite') {
        // A rebuild that fails half-way (here its new table cannot be made) leaves the old one whole,
        // orphan included, for the next start to migrate.
        await sql`create table chunk_vectors_next (x integer)`.execute(db);
        await expect(m608.up(db as never)).rejects.toThrow();
        expect(await vectorIds(db)).toEqual(['doc-1-0', 'doc-1-1', 'gone-2']);
        await sql`drop table chunk_vectors_next`.execute(db);
      }
      await m608.up(db as never);
      expect(await vectorIds(db)).toEqual(['doc-1-0', 'doc-1-1']);
    });

    it('a vector goes with its chunk, a vector for a missing chunk is refused, and a deleted document takes none', async () => {
      const { db } = await open();
      await migrateToLatest(db, documentsMigrations);
      const store = new DocumentStore(db, dialect);
      await addDocument(store, 'doc-2');
      await addDocument(store, 'doc-3');
      await store.setEmbeddings('doc-2', 'm', [vector('doc-2-0'), vector('doc-2-1')], {});
      await store.setEmbeddings('doc-3', 'm', [vector('doc-3-0')], {});

      // The chunks go (a document processed again): their vectors go with them, whoever deletes.
      await db.deleteFrom('chunks').where('document_id', '=', 'doc-2').execute();
      expect(await vectorIds(db)).toEqual(['doc-3-0']);

      // A batch for chunks that are gone (its document was processed again meanwhile) writes nothing.
      await expect(store.setEmbeddings('doc-2', 'm', [vector('doc-2-0')], {})).rejects.toThrow();
      expect(await vectorIds(db)).toEqual(['doc-3-0']);

      // A document being deleted (holds -1) takes no more vectors, and its chunks keep no model.
      await db.updateTable('documents').set({ holds: -1 }).where('id', '=', 'doc-3').execute();
      await expect(
        store.setEmbeddings('doc-3', 'm', [vector('doc-3-1')], { status: 'embedded' }),
      ).rejects.toThrow('the document was deleted while it was embedded');
      const doc3 = await db
        .selectFrom('chunks')
        .select(['id', 'embedding_model'])
        .where('document_id', '=', 'doc-3')
        .orderBy('id')
        .execute();
      expect(doc3).toEqual([
        { id: 'doc-3-0', embedding_model: 'm' },
        { id: 'doc-3-1', embedding_model: null },
      ]);
      expect((await store.get('acct-a', 'doc-3'))?.status).toBe('chunked');

      // Its delete finishes: nothing of it is left behind.
      await store.delete('acct-a', 'doc-3', '2026-12-02T00:00:01.000Z');
      expect(await vectorIds(db)).toEqual([]);
      await expect(store.setEmbeddings('doc-3', 'm', [vector('doc-3-1')], {})).rejects.toThrow(
        'the document was deleted while it was embedded',
      );
      expect(await vectorIds(db)).toEqual([]);
    });
  },
);

describe.each(await testDialects())(
  'the documents being deleted, by their index (migration 609), on %s',
  (dialect: Dialect) => {
    let handle: DatabaseHandle | null = null;
    const schema = uniqueName('deleting');
    afterAll(async () => {
      if (handle && dialect === 'postgres')
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(handle.db);
      await handle?.close();
    });

    it('the sweep finds them without reading the table, and only them', async () => {
      handle = await openDatabase(
        dialect === 'postgres'
          ? { databaseUrl: PG_URL, dataDir: ':memory:', pgSchema: schema, pgPoolSize: 2 }
          : { databaseUrl: '', dataDir: ':memory:' },
      );
      const { db } = handle;
      await migrateToLatest(db, documentsMigrations);
      const store = new DocumentStore(db, dialect);
      for (const id of ['doc-a', 'doc-b', 'doc-c']) await store.insert(document(id), []);
      await db
        .updateTable('documents')
        .set({ holds: -1, held_at: '2026-12-02T00:00:00.000Z' })
        .where('id', '=', 'doc-b')
        .execute();
      await db
        .updateTable('documents')
        .set({ holds: -1, held_at: '2026-12-02T01:00:00.000Z' })
        .where('id', '=', 'doc-c')
        .execute();
      expect((await store.deleting()).map((r) => r.id)).toEqual(['doc-b', 'doc-c']);
      expect((await store.deleting('2026-12-02T00:30:00.000Z')).map((r) => r.id)).toEqual(['doc-b']);
      // Taken over only while still stopped: not one whose delete restarted since the list was read,
      // nor one not being deleted; once taken, it is stamped, so a second taker finds it started.
      const before = '2026-12-02T00:30:00.000Z';
      expect(await store.takeOverDelete('doc-c', before, '2026-12-02T02:00:00.000Z')).toBe(false);
      expect(await store.takeOverDelete('doc-a', before, '2026-12-02T02:00:00.000Z')).toBe(false);
      expect(await store.takeOverDelete('doc-b', before, '2026-12-02T02:00:00.000Z')).toBe(true);
      expect(await store.takeOverDelete('doc-b', before, '2026-12-02T02:00:01.000Z')).toBe(false);

      const query = sql`select account_id, id, topic from documents where holds < 0 and (held_at is null or held_at < '2026-12-02T00:30:00.000Z') order by id`;
      const plan =
        dialect === 'sqlite'
          ? (await sql<{ detail: string }>`explain query plan ${query}`.execute(db)).rows
              .map((r) => r.detail)
              .join('\n')
          : await db.transaction().execute(async (trx) => {
              // A table of three rows is read whole whatever its indexes: ask whether the index can serve.
              await sql`set local enable_seqscan = off`.execute(trx);
              const rows = (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)).rows;
              return rows.map((r) => r['QUERY PLAN']).join('\n');
            });
      expect(plan).toContain('documents_deleting_idx');
    });
  },
);
