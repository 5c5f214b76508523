import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Dialect } from '../../core/db/types.js';
import { words } from './bm25.js';
import type { ProcessJob } from './document-service.js';
import type { ChunksTable, DocumentPagesTable, DocumentsTable } from './tables.js';
import type { TextChunk } from './types.js';
import './tables.js';

export type DocumentRow = DocumentsTable;

/** Queries on the documents module's own tables. */
export class DocumentStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
  ) {}

  listQuery(accountId: string) {
    return this.db.selectFrom('documents').selectAll().where('account_id', '=', accountId);
  }

  get(accountId: string, id: string): Promise<DocumentRow | undefined> {
    return this.db
      .selectFrom('documents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  byHash(accountId: string, topic: string, hash: string): Promise<DocumentRow | undefined> {
    return this.db
      .selectFrom('documents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('content_hash', '=', hash)
      .executeTakeFirst();
  }

  pages(documentId: string): Promise<DocumentPagesTable[]> {
    return this.db
      .selectFrom('document_pages')
      .selectAll()
      .where('document_id', '=', documentId)
      .orderBy('page_number')
      .execute();
  }

  /** The document and its pages, in one transaction: never a document without its text. */
  async insert(row: DocumentRow, pages: DocumentPagesTable[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('documents').values(row).execute();
      for (let i = 0; i < pages.length; i += 100)
        await trx
          .insertInto('document_pages')
          .values(pages.slice(i, i + 100))
          .execute();
    });
  }

  async setStatus(id: string, status: string, fields: Partial<DocumentRow> = {}): Promise<void> {
    await this.db
      .updateTable('documents')
      .set({ ...fields, status })
      .where('id', '=', id)
      .execute();
  }

  /** Ends a processing job, unless another request replaced its parameters meanwhile (then false). */
  async clearProcessing(id: string, expected: string): Promise<boolean> {
    const result = await this.db
      .updateTable('documents')
      .set({ processing: null })
      .where('id', '=', id)
      .where('processing', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Processing jobs that had not ended (queued or running when the process stopped). */
  async pending(): Promise<ProcessJob[]> {
    const rows = await this.db
      .selectFrom('documents')
      .select('processing')
      .where('processing', 'is not', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => JSON.parse(r.processing as string) as ProcessJob);
  }

  /** Deletes a document with its pages and chunks; the chunk ids go, for the vector cache. */
  async delete(accountId: string, id: string): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const chunkIds = await trx.selectFrom('chunks').select('id').where('document_id', '=', id).execute();
      await trx.deleteFrom('chunk_vectors').where('document_id', '=', id).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', id).execute();
      await trx.deleteFrom('document_pages').where('document_id', '=', id).execute();
      await trx.deleteFrom('documents').where('account_id', '=', accountId).where('id', '=', id).execute();
      return chunkIds.map((c) => c.id);
    });
  }

  /** Replaces a document's chunks atomically (processing again never leaves a mix). */
  async replaceChunks(
    doc: DocumentRow,
    chunks: Array<TextChunk & { id: string }>,
    updated: Partial<DocumentRow>,
  ): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const old = await trx.selectFrom('chunks').select('id').where('document_id', '=', doc.id).execute();
      await trx.deleteFrom('chunk_vectors').where('document_id', '=', doc.id).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', doc.id).execute();
      const rows: ChunksTable[] = chunks.map((c) => ({
        id: c.id,
        document_id: doc.id,
        account_id: doc.account_id,
        topic: doc.topic,
        chunk_index: c.index,
        page_number: c.pageNumber,
        start_offset: c.startOffset,
        end_offset: c.endOffset,
        text: c.text,
        terms: words(c.text).join(' '),
        embedding_model: null,
      }));
      for (let i = 0; i < rows.length; i += 100)
        await trx
          .insertInto('chunks')
          .values(rows.slice(i, i + 100))
          .execute();
      await trx.updateTable('documents').set(updated).where('id', '=', doc.id).execute();
      return old.map((o) => o.id);
    });
  }

  chunksOf(documentId: string) {
    return this.db
      .selectFrom('chunks')
      .select(['id', 'chunk_index', 'page_number', 'start_offset', 'end_offset', 'text', 'embedding_model'])
      .where('document_id', '=', documentId);
  }

  async setEmbeddings(
    documentId: string,
    model: string,
    vectors: Array<{ id: string; embedding: Buffer }>,
    updated: Partial<DocumentRow>,
  ): Promise<void> {
    if (vectors.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('chunk_vectors')
        .values(vectors.map((v) => ({ chunk_id: v.id, document_id: documentId, embedding: v.embedding })))
        .onConflict((oc) =>
          oc.column('chunk_id').doUpdateSet((eb) => ({ embedding: eb.ref('excluded.embedding') })),
        )
        .execute();
      await trx
        .updateTable('chunks')
        .set({ embedding_model: model })
        .where('document_id', '=', documentId)
        .where(
          'id',
          'in',
          vectors.map((v) => v.id),
        )
        .execute();
      // A batch before the last changes no document field: an empty SET is not SQL.
      if (Object.keys(updated).length > 0)
        await trx.updateTable('documents').set(updated).where('id', '=', documentId).execute();
    });
  }

  /** Embedded chunks of a topic, for the in-process vector index. */
  embeddedChunks(accountId: string, topic: string) {
    return this.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .innerJoin('chunk_vectors', 'chunk_vectors.chunk_id', 'chunks.id')
      .select(['chunks.id', 'chunk_vectors.embedding', 'chunks.embedding_model'])
      .where('chunks.account_id', '=', accountId)
      .where('chunks.topic', '=', topic)
      .where('documents.status', '=', 'indexed')
      .orderBy('chunks.id')
      .execute();
  }

  /** A topic's version: changes whenever its indexed chunks change (count and newest update). */
  async topicVersion(accountId: string, topic: string): Promise<string> {
    const row = await this.db
      .selectFrom('documents')
      .select((eb) => [
        eb.fn.count<number>('id').as('n'),
        eb.fn.max('updated_at').as('at'),
        eb.fn.sum<number>('chunk_count').as('c'),
      ])
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('status', '=', 'indexed')
      .executeTakeFirst();
    return `${Number(row?.n ?? 0)}:${Number(row?.c ?? 0)}:${row?.at ?? ''}`;
  }

  async topics(accountId: string) {
    return this.db
      .selectFrom('documents')
      .select((eb) => [
        'topic',
        eb.fn.count<number>('id').as('documentCount'),
        eb.fn.sum<number>('chunk_count').as('chunkCount'),
        eb.fn.max('embedding_model').as('embeddingModel'),
        eb.fn.max('updated_at').as('updatedAt'),
      ])
      .where('account_id', '=', accountId)
      .groupBy('topic')
      .orderBy('topic')
      .execute();
  }

  /** The embedding models used by indexed documents of these topics. */
  async modelsOf(accountId: string, topics: string[] | null): Promise<string[]> {
    let q = this.db
      .selectFrom('documents')
      .select('embedding_model')
      .distinct()
      .where('account_id', '=', accountId)
      .where('status', '=', 'indexed')
      .where('embedding_model', 'is not', null);
    if (topics) q = q.where('topic', 'in', topics);
    const rows = await q.execute();
    return rows.map((r) => r.embedding_model as string);
  }

  /**
   * Chunks matching any of the terms (FTS5 on SQLite, the GIN-indexed tsvector on PostgreSQL), at most
   * `cap`, in index order (SQLite then stops at the cap without sorting every match). The database
   * filters; the service ranks (BM25 in process), so both databases give the same results while a query
   * matches at most `cap` chunks, and a common term over a huge topic reads at most `cap` rows.
   */
  async keywordCandidates(
    accountId: string,
    topics: string[] | null,
    terms: string[],
    cap: number,
  ): Promise<Array<{ id: string; terms: string }>> {
    if (terms.length === 0) return [];
    const inTopics = topics ? sql`and c.topic in (${sql.join(topics)})` : sql``;
    if (this.dialect === 'sqlite') {
      // Each term quoted: user text is never FTS5 syntax.
      const match = terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
      const rows = await sql<{ id: string; terms: string }>`
        select c.id as id, c.terms as terms
        from chunks_fts join chunks c on c.rowid = chunks_fts.rowid
        join documents d on d.id = c.document_id
        where chunks_fts match ${match} and c.account_id = ${accountId} and d.status = 'indexed' ${inTopics}
        order by chunks_fts.rowid limit ${cap}`.execute(this.db);
      return rows.rows;
    }
    const tsquery = terms.join(' | ');
    const rows = await sql<{ id: string; terms: string }>`
      select c.id as id, c.terms as terms
      from chunks c join documents d on d.id = c.document_id
      where c.tsv @@ to_tsquery('simple', ${tsquery}) and c.account_id = ${accountId} and d.status = 'indexed' ${inTopics}
      order by c.id limit ${cap}`.execute(this.db);
    return rows.rows;
  }

  /** Indexed chunks in these topics (BM25's N). */
  async indexedChunkCount(accountId: string, topics: string[] | null): Promise<number> {
    let q = this.db
      .selectFrom('documents')
      .select((eb) => eb.fn.sum<number>('chunk_count').as('n'))
      .where('account_id', '=', accountId)
      .where('status', '=', 'indexed');
    if (topics) q = q.where('topic', 'in', topics);
    const row = await q.executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Chunks with their documents, for results. */
  async describe(ids: string[]) {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .select([
        'chunks.id as chunkId',
        'chunks.document_id as documentId',
        'documents.title as title',
        'chunks.topic as topic',
        'chunks.page_number as pageNumber',
        'chunks.text as text',
      ])
      .where('chunks.id', 'in', ids)
      .execute();
  }
}
