import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Dialect } from '../../core/db/types.js';
import type { JobPayload, jobs } from '../../core/queue/index.js';
import type { ChunksTable, DocumentPagesTable, DocumentsTable } from './tables.js';
import './tables.js';

export type DocumentRow = DocumentsTable;
/** A processing job's payload (declared in the job catalogue). */
type ProcessJob = JobPayload<typeof jobs.documentProcessing>;

/** Chunk rows per delete transaction: a few milliseconds each on SQLite, so requests run between them. */
const WRITE_BATCH = 100;
/**
 * Chunk rows per insert statement, and their characters (text and terms): a statement is a round trip
 * and a commit, so fewer and larger ones ingest faster (measured: 100 → 400 rows of 200 characters),
 * while the character bound keeps one statement of large chunks to tens of milliseconds on SQLite.
 */
const INSERT_ROWS = 400;
const INSERT_CHARS = 256 * 1024;

/** Rows in statements of at most `INSERT_ROWS` rows and `INSERT_CHARS` characters (text and terms). */
function* insertBatches(rows: ChunksTable[]): Generator<ChunksTable[]> {
  let from = 0;
  let chars = 0;
  for (let i = 0; i < rows.length; i++) {
    chars += rows[i]!.text.length + rows[i]!.terms.length;
    if (i - from + 1 < INSERT_ROWS && chars < INSERT_CHARS && i < rows.length - 1) continue;
    yield rows.slice(from, i + 1);
    from = i + 1;
    chars = 0;
  }
}

/** A turn of the event loop: I/O and timers run before the next batch. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

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

  /** One more hold on a document: its holds then, or null when it is gone or being deleted (-1). */
  async hold(accountId: string, id: string, at: string): Promise<number | null> {
    const row = await this.db
      .updateTable('documents')
      .set({ holds: sql<number>`holds + 1`, held_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('holds', '>=', 0)
      .returning('holds')
      .executeTakeFirst();
    return row?.holds ?? null;
  }

  /** One hold less, never deleting: an upload gives back the hold it took on a document it found. */
  async unhold(accountId: string, id: string, at: string): Promise<void> {
    await this.db
      .updateTable('documents')
      .set({ holds: sql<number>`holds - 1`, held_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('holds', '>=', 1)
      .execute();
  }

  /**
   * A page of a topic's document ids after `after`, in id order: all but those being deleted, or
   * only those nobody holds (`holds` 0).
   */
  async idsInTopic(
    accountId: string,
    topic: string,
    options: { unheldOnly: boolean; after: string; limit: number },
  ): Promise<string[]> {
    const rows = await this.db
      .selectFrom('documents')
      .select('id')
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('holds', options.unheldOnly ? '=' : '>=', 0)
      .where('id', '>', options.after)
      .orderBy('id')
      .limit(options.limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Marks a document nobody holds (or, `heldToo`, any) as this caller's to delete (-1): its topic, or
   * null when it is held, gone or being deleted already.
   */
  async claimUnheld(accountId: string, id: string, at: string, heldToo = false): Promise<string | null> {
    const row = await this.db
      .updateTable('documents')
      .set({ holds: -1, held_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('holds', heldToo ? '>=' : '=', 0)
      .returning('topic')
      .executeTakeFirst();
    return row?.topic ?? null;
  }

  /**
   * Takes a stopped delete over: stamps it now if it is still marked (-1) since before `before`;
   * false when its delete has been restarted since, or it is gone.
   */
  async takeOverDelete(id: string, before: string, at: string): Promise<boolean> {
    const row = await this.db
      .updateTable('documents')
      .set({ held_at: at })
      .where('id', '=', id)
      .where(sql<boolean>`holds < 0`)
      .where((eb) => eb.or([eb('held_at', 'is', null), eb('held_at', '<', before)]))
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Documents a delete left half-done (marked -1 and still there: a process stopped mid-way, or the
   * database failed it), marked before `before` when given.
   */
  async deleting(before?: string): Promise<Array<{ account_id: string; id: string; topic: string }>> {
    // `holds < 0` as written in the partial index's predicate (migration 609), so both databases read
    // the index, not the table.
    let query = this.db
      .selectFrom('documents')
      .select(['account_id', 'id', 'topic'])
      .where(sql<boolean>`holds < 0`);
    if (before !== undefined)
      query = query.where((eb) => eb.or([eb('held_at', 'is', null), eb('held_at', '<', before)]));
    return query.orderBy('id').execute();
  }

  /** The topics starting with `prefix` that hold documents, with their accounts (one read of the table). */
  async topicsStartingWith(prefix: string): Promise<Array<{ account_id: string; topic: string }>> {
    return this.db
      .selectFrom('documents')
      .select(['account_id', 'topic'])
      .distinct()
      .where(sql<boolean>`substr(topic, 1, ${prefix.length}) = ${prefix}`)
      .orderBy('account_id')
      .orderBy('topic')
      .execute();
  }

  /**
   * A page of a topic's documents whose holds have not moved since `before` (being deleted ones left
   * out), in id order after `after`: by the (account, topic) index, whatever the table's size.
   */
  async settledHolds(
    accountId: string,
    topic: string,
    before: string,
    page: { after: string; limit: number },
  ): Promise<Array<{ id: string; holds: number; held_at: string | null; made_held: number }>> {
    return this.db
      .selectFrom('documents')
      .select(['id', 'holds', 'held_at', 'made_held'])
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('holds', '>=', 0)
      .where((eb) => eb.or([eb('held_at', 'is', null), eb('held_at', '<', before)]))
      .where('id', '>', page.after)
      .orderBy('id')
      .limit(page.limit)
      .execute();
  }

  /** Sets a document's holds to `to` if they have not moved since they were read (`from`, `heldAt`). */
  async correctHolds(
    accountId: string,
    id: string,
    seen: { holds: number; heldAt: string | null },
    to: number,
    at: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('documents')
      .set({ holds: to, held_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('holds', '=', seen.holds)
      .where((eb) => (seen.heldAt === null ? eb('held_at', 'is', null) : eb('held_at', '=', seen.heldAt)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * One hold less, in one statement: the document's topic when that was the last (or the document had
   * none), and the document is now this caller's to delete (-1: no upload takes it, no other release
   * deletes it too); else null.
   */
  async release(accountId: string, id: string, at: string): Promise<string | null> {
    const row = await this.db
      .updateTable('documents')
      .set({ holds: sql<number>`case when holds <= 1 then -1 else holds - 1 end`, held_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('holds', '>=', 0)
      .returning(['holds', 'topic'])
      .executeTakeFirst();
    return row?.holds === -1 ? row.topic : null;
  }

  pages(documentId: string): Promise<DocumentPagesTable[]> {
    return this.db
      .selectFrom('document_pages')
      .selectAll()
      .where('document_id', '=', documentId)
      .orderBy('page_number')
      .execute();
  }

  /**
   * The document and its pages, in one transaction: never a document without its text. False (and
   * nothing written) when the topic holds a document of the same content already.
   */
  async insert(row: DocumentRow, pages: DocumentPagesTable[]): Promise<boolean> {
    // Turns of the event loop around the write: a 20 MB document's hashing before it, its write, and
    // its answer's serialisation after it are each tens of milliseconds; together they would add up.
    await nextTurn();
    const inserted = await this.db.transaction().execute(async (trx) => {
      // The content's unique key decides, in the same statement: no read before the write.
      const added = await trx
        .insertInto('documents')
        .values(row)
        .onConflict((oc) => oc.columns(['account_id', 'topic', 'content_hash']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (added === undefined) return false;
      for (let i = 0; i < pages.length; i += 100)
        await trx
          .insertInto('document_pages')
          .values(pages.slice(i, i + 100))
          .execute();
      return true;
    });
    await nextTurn();
    return inserted;
  }

  /**
   * Records a processing job on the document (its parameters, until the job ends) in one statement;
   * the document's status, or undefined when the account has no such document.
   */
  async markProcessing(
    accountId: string,
    id: string,
    processing: string,
    updatedAt: string,
  ): Promise<string | undefined> {
    const row = await this.db
      .updateTable('documents')
      .set({ processing, updated_at: updatedAt })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      // One being deleted is not processed again (its chunks are going).
      .where('holds', '>=', 0)
      .returning('status')
      .executeTakeFirst();
    return row?.status;
  }

  /**
   * Sets the document's fields and ends its processing job in one statement, unless another request
   * replaced the job's parameters meanwhile (`expected` no longer there): true when the job ended (or
   * the document is gone), false when it must run again.
   */
  async finish(id: string, expected: string, fields: Partial<DocumentRow>): Promise<boolean> {
    const row = await this.db
      .updateTable('documents')
      .set({
        ...fields,
        processing: sql<string | null>`case when processing = ${expected} then null else processing end`,
      })
      .where('id', '=', id)
      .returning('processing')
      .executeTakeFirst();
    return row === undefined || row.processing === null;
  }

  async setStatus(id: string, status: string, fields: Partial<DocumentRow> = {}): Promise<void> {
    await this.db
      .updateTable('documents')
      .set({ ...fields, status })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Marks a document indexed with a new revision, above every revision of its topic (one statement):
   * each indexing is then a change every process's cache sees (vector-cache.ts), whatever the clock says.
   */
  async setIndexed(doc: Pick<DocumentRow, 'id' | 'account_id' | 'topic'>, updatedAt: string): Promise<void> {
    await this.db
      .updateTable('documents')
      .set((eb) => ({
        status: 'indexed',
        error: null,
        updated_at: updatedAt,
        revision: eb
          .selectFrom('documents as d')
          .select(sql<number>`coalesce(max(d.revision), 0) + 1`.as('next'))
          .where('d.account_id', '=', doc.account_id)
          .where('d.topic', '=', doc.topic),
      }))
      .where('id', '=', doc.id)
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

  /**
   * Deletes a document with its pages and chunks. The chunks go a batch per transaction (a large
   * document has tens of thousands, with their full-text entries): the document first leaves search
   * and listings of chunks (`loaded`, no chunks counted), so no one sees it half deleted.
   */
  async delete(accountId: string, id: string, at: string): Promise<void> {
    await this.db
      .updateTable('documents')
      // Being deleted (holds -1): an upload of the same content no longer takes it, and a queued
      // processing job no longer runs.
      .set({ status: 'loaded', chunk_count: 0, holds: -1, held_at: at, processing: null })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
    await this.clearChunks(id);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('chunk_vectors').where('document_id', '=', id).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', id).execute();
      await trx.deleteFrom('document_pages').where('document_id', '=', id).execute();
      await trx.deleteFrom('documents').where('account_id', '=', accountId).where('id', '=', id).execute();
    });
  }

  /**
   * Deletes a document's chunks and their vectors, `WRITE_BATCH` per transaction with a turn of the
   * event loop between: on SQLite every statement runs on the server's thread, and one transaction of
   * 40,000 chunks held every request for seconds.
   */
  async clearChunks(documentId: string): Promise<void> {
    // A cursor on the chunk index: asking again for "the first 100 left" would make PostgreSQL walk
    // every dead index entry of the batches before (quadratic in the document's size).
    let after = -1;
    for (;;) {
      const rows = await this.db
        .selectFrom('chunks')
        .select(['id', 'chunk_index'])
        .where('document_id', '=', documentId)
        .where('chunk_index', '>', after)
        .orderBy('chunk_index')
        .limit(WRITE_BATCH)
        .execute();
      if (rows.length === 0) break;
      const ids = rows.map((r) => r.id);
      await this.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('chunk_vectors').where('chunk_id', 'in', ids).execute();
        await trx.deleteFrom('chunks').where('id', 'in', ids).execute();
      });
      after = rows.at(-1)!.chunk_index;
      await nextTurn();
    }
    // Whatever a cursor could miss (an interrupted run's duplicate indexes): none, or a few.
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('chunk_vectors').where('document_id', '=', documentId).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', documentId).execute();
    });
  }

  /**
   * Writes `count` chunks of a document (`rowAt(i)` builds the i-th), `INSERT_ROWS` (or `INSERT_CHARS`) per statement
   * with a turn of the event loop between. The caller hides the document while it writes and marks it
   * chunked (or clears what was written) after: the document's row is the commit point.
   */
  async insertChunks(count: number, rowAt: (index: number) => ChunksTable): Promise<void> {
    let rows: ChunksTable[] = [];
    let chars = 0;
    for (let i = 0; i < count; i++) {
      const row = rowAt(i);
      rows.push(row);
      chars += row.text.length + row.terms.length;
      if (rows.length < INSERT_ROWS && chars < INSERT_CHARS && i < count - 1) continue;
      await this.db.insertInto('chunks').values(rows).execute();
      rows = [];
      chars = 0;
      await nextTurn();
    }
  }

  /**
   * A document's whole new state in one transaction: its old chunks and vectors go, `rows` (with their
   * `vectors`, if embedded) come in, and its row gets `fields` — with a new revision when `indexed` (as
   * `setIndexed`) — and its processing job `expected` ends unless replaced meanwhile (as `finish`; the
   * result; null: the job is left to the caller).
   * Readers see the document before or after, never between; a failure leaves it as it was. For
   * documents of one embedding batch: a larger one is written a batch per transaction (`insertChunks`).
   */
  async replaceDocument(
    doc: Pick<DocumentRow, 'id' | 'account_id' | 'topic'>,
    rows: ChunksTable[],
    vectors: Buffer[] | null,
    fields: Partial<DocumentRow>,
    job: { indexed: boolean; expected: string | null },
  ): Promise<boolean> {
    await nextTurn();
    const ended = await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('chunk_vectors').where('document_id', '=', doc.id).execute();
      await trx.deleteFrom('chunks').where('document_id', '=', doc.id).execute();
      // A turn of the event loop after each insert: on SQLite each statement holds the thread.
      for (const batch of insertBatches(rows)) {
        await trx.insertInto('chunks').values(batch).execute();
        await nextTurn();
      }
      if (vectors && rows.length > 0)
        await trx
          .insertInto('chunk_vectors')
          .values(rows.map((r, i) => ({ chunk_id: r.id, document_id: doc.id, embedding: vectors[i]! })))
          .execute();
      const row = await trx
        .updateTable('documents')
        .set((eb) => ({
          ...fields,
          ...(job.expected === null
            ? {}
            : {
                processing: sql<
                  string | null
                >`case when processing = ${job.expected} then null else processing end`,
              }),
          ...(job.indexed
            ? {
                revision: eb
                  .selectFrom('documents as d')
                  .select(sql<number>`coalesce(max(d.revision), 0) + 1`.as('next'))
                  .where('d.account_id', '=', doc.account_id)
                  .where('d.topic', '=', doc.topic),
              }
            : {}),
        }))
        .where('id', '=', doc.id)
        .returning('processing')
        .executeTakeFirst();
      return job.expected !== null && (row === undefined || row.processing === null);
    });
    await nextTurn();
    return ended;
  }

  chunksOf(documentId: string) {
    return this.db
      .selectFrom('chunks')
      .select(['id', 'chunk_index', 'page_number', 'start_offset', 'end_offset', 'text', 'embedding_model'])
      .where('document_id', '=', documentId);
  }

  /**
   * The chunks of the account's documents among `documentIds`, counted per document (absent: not the
   * account's). A document being chunked or deleted (`loaded`) counts none, as its chunk pages show
   * none. The count reads the (document_id, chunk_index) index alone, never the chunks' text.
   */
  async chunkCounts(accountId: string, documentIds: readonly string[]): Promise<Map<string, number>> {
    if (documentIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('documents')
      .leftJoin('chunks', (join) =>
        join.onRef('chunks.document_id', '=', 'documents.id').on('documents.status', '!=', 'loaded'),
      )
      .select((eb) => ['documents.id as id', eb.fn.count<number | string>('chunks.chunk_index').as('n')])
      .where('documents.account_id', '=', accountId)
      .where('documents.id', 'in', [...new Set(documentIds)])
      .groupBy('documents.id')
      .execute();
    return new Map(rows.map((r) => [r.id, Number(r.n)]));
  }

  /** A document's chunks from index `from`, `limit` at most, in index order: the page's rows alone. */
  chunkRange(documentId: string, from: number, limit: number) {
    return this.chunksOf(documentId)
      .where('chunk_index', '>=', from)
      .orderBy('chunk_index')
      .limit(limit)
      .execute();
  }

  /**
   * One chunk by id, when it belongs to one of `documentIds` and they to the account (a chunk of a
   * `loaded` document is hidden, as in its pages): a primary-key lookup, whatever the documents' size.
   */
  findChunk(accountId: string, documentIds: readonly string[], chunkId: string) {
    if (documentIds.length === 0) return Promise.resolve(undefined);
    return this.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .select([
        'chunks.id',
        'chunks.document_id',
        'chunks.chunk_index',
        'chunks.page_number',
        'chunks.start_offset',
        'chunks.end_offset',
        'chunks.text',
        'chunks.embedding_model',
      ])
      .where('chunks.id', '=', chunkId)
      .where('documents.account_id', '=', accountId)
      .where('documents.id', 'in', [...new Set(documentIds)])
      .where('documents.status', '!=', 'loaded')
      .executeTakeFirst();
  }

  async setEmbeddings(
    documentId: string,
    model: string,
    vectors: Array<{ id: string; embedding: Buffer }>,
    updated: Partial<DocumentRow>,
  ): Promise<void> {
    if (vectors.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      // A document being deleted takes no more vectors, so its embedding stops at this batch (and its
      // model calls with it). A delete that starts after this read is covered by the vectors'
      // reference to their chunks (migration 608): they go with them.
      const live = await trx
        .selectFrom('documents')
        .select('holds')
        .where('id', '=', documentId)
        .executeTakeFirst();
      if (live === undefined || Number(live.holds) < 0)
        throw new Error('the document was deleted while it was embedded');
      await trx
        .insertInto('chunk_vectors')
        .values(vectors.map((v) => ({ chunk_id: v.id, document_id: documentId, embedding: v.embedding })))
        .onConflict((oc) =>
          oc.column('chunk_id').doUpdateSet((eb) => ({ embedding: eb.ref('excluded.embedding') })),
        )
        .execute();
      // By primary key alone: with `document_id = ?` too, SQLite walked the document's whole
      // (document_id, chunk_index) index for every batch, quadratic in the document's size.
      await trx
        .updateTable('chunks')
        .set({ embedding_model: model })
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

  /** Indexed documents of a topic, for loading its vectors document by document (vector-cache.ts). */
  async indexedDocuments(accountId: string, topic: string) {
    const rows = await this.db
      .selectFrom('documents')
      .select(['id', 'updated_at', 'chunk_count', 'embedding_model', 'revision'])
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('status', '=', 'indexed')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      revision: Number(r.revision),
      updatedAt: r.updated_at,
      chunkCount: Number(r.chunk_count),
      model: r.embedding_model,
    }));
  }

  /**
   * A document's chunks after chunk `afterIndex`, `limit` at most, in index order, with their stored
   * terms and their vectors (null for a chunk not embedded): the chunk page by the (document_id,
   * chunk_index) index, then their vectors by key. Each page costs its own rows on both databases (a
   * join let PostgreSQL hash the whole vector table for every page).
   */
  async indexedChunks(documentId: string, afterIndex: number, limit: number) {
    const chunks = await this.db
      .selectFrom('chunks')
      .select(['id', 'chunk_index', 'terms', 'embedding_model'])
      .where('document_id', '=', documentId)
      .where('chunk_index', '>', afterIndex)
      .orderBy('chunk_index')
      .limit(limit)
      .execute();
    if (chunks.length === 0) return { last: null, rows: [] };
    const vectors = await this.db
      .selectFrom('chunk_vectors')
      .select(['chunk_id', 'embedding'])
      .where(
        'chunk_id',
        'in',
        chunks.map((c) => c.id),
      )
      .execute();
    const byId = new Map(vectors.map((v) => [v.chunk_id, v.embedding]));
    const rows = chunks.map((c) => ({
      id: c.id,
      terms: c.terms,
      embedding: byId.get(c.id) ?? null,
      embedding_model: c.embedding_model,
    }));
    return { last: chunks.at(-1)!.chunk_index, rows, more: chunks.length === limit };
  }

  /** The topics (of every account) with indexed chunks, most recently changed first: what a boot warms. */
  async recentTopics(limit: number) {
    const rows = await this.db
      .selectFrom('documents')
      .select((eb) => [
        'account_id',
        'topic',
        eb.fn.sum<number>('chunk_count').as('chunks'),
        eb.fn.max('updated_at').as('at'),
      ])
      .where('status', '=', 'indexed')
      .groupBy(['account_id', 'topic'])
      .orderBy('at', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ accountId: r.account_id, topic: r.topic, chunks: Number(r.chunks ?? 0) }));
  }

  /** Every (account, topic) with an indexed document: the topics a snapshot may be kept for. */
  async indexedTopics(): Promise<Array<{ accountId: string; topic: string }>> {
    const rows = await this.db
      .selectFrom('documents')
      .select(['account_id', 'topic'])
      .distinct()
      .where('status', '=', 'indexed')
      .execute();
    return rows.map((r) => ({ accountId: r.account_id, topic: r.topic }));
  }

  /**
   * A topic's version: changes whenever its indexed chunks change. Each indexing raises the sum of
   * revisions (a new revision is above every one of the topic's), each deletion lowers the count.
   */
  async topicVersion(accountId: string, topic: string): Promise<string> {
    const row = await this.db
      .selectFrom('documents')
      .select((eb) => [
        eb.fn.count<number>('id').as('n'),
        eb.fn.max('updated_at').as('at'),
        eb.fn.sum<number>('chunk_count').as('c'),
        eb.fn.sum<number>('revision').as('r'),
      ])
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('status', '=', 'indexed')
      .executeTakeFirst();
    return `${Number(row?.n ?? 0)}:${Number(row?.c ?? 0)}:${Number(row?.r ?? 0)}:${row?.at ?? ''}`;
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

  /** The languages the account's indexed documents (in these topics) are indexed in (language.ts). */
  async languagesOf(accountId: string, topics: string[] | null): Promise<string[]> {
    let q = this.db
      .selectFrom('documents')
      .select('language')
      .distinct()
      .where('account_id', '=', accountId)
      .where('status', '=', 'indexed');
    if (topics) q = q.where('topic', 'in', topics);
    const rows = await q.execute();
    return rows.map((r) => r.language).sort();
  }

  /**
   * Refreshes the planner's statistics of the chunk tables: after a bulk ingest PostgreSQL otherwise
   * plans a topic's load and version reads as if the tables were empty.
   */
  async analyze(): Promise<void> {
    if (this.dialect === 'postgres') await sql`analyze chunks, documents, chunk_vectors`.execute(this.db);
    else await sql`analyze`.execute(this.db);
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
