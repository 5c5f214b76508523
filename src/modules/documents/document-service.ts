import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import type { JobPayload, JobQueue, jobs } from '../../core/queue/index.js';
import type { DocumentRow, DocumentStore } from './store.js';
import type { ChunksTable } from './tables.js';
import { DOCUMENT_SOURCES, type DocumentSource, type LoadedDocument } from './types.js';

export const DOCUMENT_STATUSES = ['loaded', 'chunked', 'embedded', 'indexed', 'failed'] as const;
type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];
export const OPERATIONS = ['chunk', 'embed', 'index'] as const;

/**
 * What a processing job carries (declared in the job catalogue, core/queue/jobs.ts); also kept on the
 * document until the job ends (crash recovery).
 */
export type ProcessJob = JobPayload<typeof jobs.documentProcessing>;

const WAIT_POLL_MS = 50;
/** Inserts of a document whose content's document is being deleted: ~0.75 s of waits in all. */
const CREATE_TRIES = 5;
/** What owns a topic's documents (a document store): the references it holds, or that it is gone. */
export interface TopicOwner {
  references: ReadonlyMap<string, number>;
  gone: boolean;
}

/** Document ids read per statement when a topic's documents are deleted. */
const TOPIC_PAGE = 500;

/**
 * How long a document may stay marked for deletion (holds -1) before a pass takes its delete over:
 * longer than any delete runs, so a pass never contends with the request or process still running it.
 */
export const UNFINISHED_DELETE_MS = 5 * 60_000;

export const LIST_SPEC: ListSpec = {
  columns: { topic: 'topic', status: 'status', source: 'source', createdAt: 'created_at', title: 'title' },
  sortable: ['id', 'createdAt', 'title'],
  nullable: ['title'],
  filters: { topic: 'string', status: DOCUMENT_STATUSES, source: DOCUMENT_SOURCES },
  projectable: [
    'documentId',
    'source',
    'url',
    'title',
    'mimeType',
    'topic',
    'metadata',
    'pages',
    'charCount',
    'pageCount',
    'chunkCount',
    'contentHash',
    'status',
    'processing',
    'error',
    'embeddingModel',
    'createdAt',
    'updatedAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 20,
  maxLimit: 200,
};

export function documentView(row: DocumentRow, pages?: Array<{ page_number: number; text: string }>) {
  return {
    id: row.id,
    documentId: row.id,
    source: row.source as DocumentSource,
    url: row.url,
    title: row.title,
    mimeType: row.mime_type,
    topic: row.topic,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    ...(pages ? { pages: pages.map((p) => ({ pageNumber: p.page_number, text: p.text })) } : {}),
    charCount: row.char_count,
    pageCount: row.page_count,
    chunkCount: row.chunk_count,
    contentHash: row.content_hash,
    status: row.status as DocumentStatus,
    /** A processing job is queued or running. */
    processing: row.processing !== null,
    error: row.error,
    embeddingModel: row.embedding_model,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function contentHashOf(doc: LoadedDocument): string {
  const hash = createHash('sha256');
  for (const page of doc.pages) hash.update(page.text).update('\f');
  return hash.digest('hex');
}

/** Documents: store what a loader produced, list, read, delete, and queue their processing. */
export class DocumentService {
  /** A `finishDeletes` pass is running. */
  private finishing = false;

  constructor(
    private readonly store: DocumentStore,
    private readonly queue: JobQueue<ProcessJob>,
    private readonly clock: Clock,
    /** A document's chunks were deleted (search forgets them; its topic's snapshot goes). */
    private readonly onChunksGone: (accountId: string, topic: string) => void | Promise<void>,
  ) {}

  /**
   * Stores a loaded document; the same content in the same topic is the existing one (`created: false`).
   * `hold`: the caller keeps a reference to it (a store's loader), given back with `release`.
   */
  async create(
    accountId: string,
    input: { source: string; url?: string; topic: string; title?: string; metadata: Record<string, unknown> },
    loaded: LoadedDocument,
    options: { hold?: boolean } = {},
  ): Promise<{ created: boolean; shared?: boolean; document: ReturnType<typeof documentView> }> {
    const hash = contentHashOf(loaded);
    const now = this.clock.now().toISOString();
    const row: DocumentRow = {
      id: newId('doc'),
      account_id: accountId,
      topic: input.topic,
      source: input.source,
      url: input.url ?? null,
      title: input.title ?? loaded.title,
      mime_type: loaded.mimeType,
      content_hash: hash,
      char_count: loaded.pages.reduce((n, p) => n + p.text.length, 0),
      page_count: loaded.pages.length,
      metadata: JSON.stringify(input.metadata),
      status: 'loaded',
      error: null,
      chunk_count: 0,
      embedding_model: null,
      // Set when it is chunked (its topic's language then).
      language: 'none',
      processing: null,
      revision: 0,
      holds: options.hold ? 1 : 0,
      held_at: options.hold ? now : null,
      made_held: options.hold ? 1 : 0,
      created_at: now,
      updated_at: now,
    };
    const pages = loaded.pages.map((p) => ({ document_id: row.id, page_number: p.pageNumber, text: p.text }));
    // The same content in the topic already (loaded before, or by a load running at the same time):
    // that document (held when asked). Deleted meanwhile, this one is written after all; being deleted
    // (its rows go in batches), it is not taken, and the insert is tried again once it has gone.
    for (let tries = 0; tries < CREATE_TRIES; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, 25 * 2 ** tries));
      if (await this.store.insert(row, pages)) return { created: true, document: documentView(row, pages) };
      const existing = await this.store.byHash(accountId, input.topic, hash);
      if (!existing || existing.holds < 0) continue;
      const holds = options.hold ? await this.store.hold(accountId, existing.id, now) : 0;
      if (holds === null) continue;
      // `shared`: made by an upload like this one and held by others (loaders, or that upload) before
      // this hold, so the last hold given back deletes it. One the documents API made is never
      // deleted by an upload that fails, whichever of two failing uploads gives its hold back first.
      const view = documentView(existing, await this.store.pages(existing.id));
      const shared = holds > 1 && existing.made_held === 1;
      return { created: false, ...(shared ? { shared: true } : {}), document: view };
    }
    throw new AppError(
      'CONFLICT',
      'A document of the same content is being loaded and deleted: load it again',
    );
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, LIST_SPEC);
    return runList(this.store.listQuery(accountId), query, LIST_SPEC, (row) => documentView(row));
  }

  async get(accountId: string, id: string, withPages: boolean) {
    const row = await this.store.get(accountId, id);
    if (!row) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
    return documentView(row, withPages ? await this.store.pages(id) : undefined);
  }

  /**
   * Deletes a document nobody holds. One a document store holds (a loader names it, or an upload into
   * the store is loading it) is refused (409): deleted here, the loader would name nothing and its
   * chunk pages answer 404 for good.
   */
  async delete(accountId: string, id: string): Promise<void> {
    const topic = await this.store.claimUnheld(accountId, id, this.nowIso());
    if (topic === null) {
      const row = await this.store.get(accountId, id);
      if (!row || row.holds < 0) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
      throw new AppError(
        'CONFLICT',
        `Document ${id} is held by a document store (${row.topic}): remove its loader there, or delete the store`,
        { topic: row.topic, holds: row.holds },
      );
    }
    await this.store.delete(accountId, id, this.nowIso());
    await this.onChunksGone(accountId, topic);
  }

  /**
   * Gives back a hold `create` took: the last one deletes the document (one that had none too). Gone
   * already, or being deleted by another: nothing to do.
   */
  async release(accountId: string, id: string): Promise<void> {
    const topic = await this.store.release(accountId, id, this.nowIso());
    if (topic === null) return;
    await this.store.delete(accountId, id, this.nowIso());
    await this.onChunksGone(accountId, topic);
  }

  /**
   * Deletes a topic's documents whose owner went (a document store deleted): every one, held or not
   * (`all`), or only those nobody holds (a store's index emptied while an upload into it may still
   * hold what it loaded). Returns how many went.
   */
  async deleteInTopic(accountId: string, topic: string, which: 'all' | 'unheld'): Promise<number> {
    let after = '';
    let count = 0;
    try {
      for (;;) {
        const ids = await this.store.idsInTopic(accountId, topic, {
          unheldOnly: which === 'unheld',
          after,
          limit: TOPIC_PAGE,
        });
        for (const id of ids) {
          // Claimed as its delete starts, held or not (all), or only if still unheld (an upload may
          // have taken it since the page was read): a release, the sweep or the holds pass running
          // meanwhile leaves it to this delete. Claimed one by one, each claim is as recent as its
          // delete, so the sweep (which takes over deletes claimed minutes ago) never runs it twice.
          if ((await this.store.claimUnheld(accountId, id, this.nowIso(), which === 'all')) === null)
            continue;
          await this.store.delete(accountId, id, this.nowIso());
          count++;
        }
        if (ids.length < TOPIC_PAGE) break;
        after = ids.at(-1) ?? after;
      }
    } finally {
      // Search forgets what went, also when a later document failed to go.
      if (count > 0) await this.onChunksGone(accountId, topic);
    }
    return count;
  }

  /** Gives back a hold `create` took on a document it found, never deleting it (others made it). */
  unhold(accountId: string, id: string): Promise<void> {
    return this.store.unhold(accountId, id, this.nowIso());
  }

  /** A document's chunks in order, a page at a time (keyed by chunk index: `cursor` is the last one's). */
  async chunks(accountId: string, id: string, page: { limit?: number; cursor?: string } = {}) {
    const after = page.cursor === undefined ? -1 : chunkCursorIndex(page.cursor);
    const limit = page.limit ?? MAX_CHUNK_PAGE;
    const row = await this.store.get(accountId, id);
    if (!row) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
    // `loaded`: no chunks yet, or chunks being written or deleted (the processor's commit point).
    if (row.status === 'loaded') return { nextCursor: null, data: [] };
    const rows = await this.store
      .chunksOf(id)
      .where('chunk_index', '>', after)
      .orderBy('chunk_index')
      .limit(limit + 1)
      .execute();
    const chunks = rows.slice(0, limit);
    const last = chunks.at(-1);
    return {
      nextCursor: rows.length > limit && last ? chunkCursor(last.chunk_index) : null,
      data: chunks.map(chunkView),
    };
  }

  /**
   * How many chunks each of these documents shows in its pages (`chunks`), in their order (an id given
   * twice counts twice): one count query, no chunk read. A document the account lacks is a 404.
   */
  async chunkCounts(accountId: string, ids: readonly string[]): Promise<number[]> {
    const counts = await this.store.chunkCounts(accountId, ids);
    return ids.map((id) => {
      const n = counts.get(id);
      if (n === undefined) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
      return n;
    });
  }

  /**
   * A document's chunks from index `from` (0-based: a shown document's chunks are indexed 0 to its
   * count − 1), `limit` (≤ MAX_CHUNK_PAGE) at most, in order: what `chunks` shows there, reading only
   * those rows.
   */
  async chunkRange(accountId: string, id: string, range: { from: number; limit: number }) {
    const row = await this.store.get(accountId, id);
    if (!row) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
    if (row.status === 'loaded' || range.limit <= 0) return [];
    const rows = await this.store.chunkRange(
      id,
      Math.max(0, range.from),
      Math.min(range.limit, MAX_CHUNK_PAGE),
    );
    return rows.map(chunkView);
  }

  /**
   * A chunk by id among the account's documents `ids` (with its document's id), or null: another
   * account's chunk, or one of a document not in `ids`, is not found.
   */
  async findChunk(accountId: string, ids: readonly string[], chunkId: string) {
    const row = await this.store.findChunk(accountId, ids, chunkId);
    return row ? { documentId: row.document_id, ...chunkView(row) } : null;
  }

  /** Queues processing; the parameters stay on the document until the job ends, for recovery. */
  async process(accountId: string, id: string, job: Omit<ProcessJob, 'documentId' | 'accountId'>) {
    if (job.chunkOverlap >= job.chunkSize)
      throw new AppError('VALIDATION_ERROR', 'chunkOverlap must be smaller than chunkSize', {
        fields: [{ field: 'body.chunkOverlap', message: 'must be smaller than chunkSize' }],
      });
    const data: ProcessJob = { ...job, documentId: id, accountId };
    // One statement: the parameters are recorded where the document is the account's.
    const status = await this.store.markProcessing(
      accountId,
      id,
      JSON.stringify(data),
      this.clock.now().toISOString(),
    );
    if (status === undefined) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
    const jobId = `process-${id}`;
    await this.queue.add(jobId, data);
    return { jobId, documentId: id, status, operations: job.operations };
  }

  /**
   * Queues again the jobs that were queued or running when the process stopped (their rows say so),
   * and ends the deletes it left half-done (a row marked -1 would otherwise refuse its content's
   * uploads for good).
   */
  /**
   * Finishes deletes left at -1 (marked before `before` when given): a process stopped, or the
   * database failed, mid-delete, and uploads of that content would wait and answer 409 until then.
   * Returns how many.
   */
  async finishDeletes(before?: string): Promise<number> {
    // One pass at a time in a process: a pass longer than the sweep's period would race the next
    // over the same rows.
    if (this.finishing) return 0;
    this.finishing = true;
    let count = 0;
    try {
      // Each on its own: one that fails (another process deleting it too) leaves the others to go.
      for (const row of await this.store.deleting(before)) {
        // Taken over only if still stopped now (the list is minutes old by the last row): a delete
        // that started meanwhile stamped it afresh.
        if (before !== undefined && !(await this.store.takeOverDelete(row.id, before, this.nowIso())))
          continue;
        await this.store
          .delete(row.account_id, row.id, this.nowIso())
          .then(async () => {
            count++;
            await this.onChunksGone(row.account_id, row.topic);
          })
          .catch(() => undefined);
      }
    } finally {
      this.finishing = false;
    }
    return count;
  }

  /**
   * Sets the holds of the documents in topics starting with `prefix` to the references their owner
   * names, for documents whose holds have not moved since `before` (an upload still loading holds one
   * nobody names yet). `owner` answers per topic: its references per document id, or `gone` (its
   * owner was deleted: what an upload made there is deleted, as the owner's delete would have), or
   * null (changed since `before`: a release may be under way, so the topic waits for the next pass).
   * A hold an upload took and never gave back (its process stopped) is dropped, one given back twice
   * restored. Returns how many were corrected and deleted.
   */
  async reconcileHolds(
    prefix: string,
    before: string,
    owner: (accountId: string, topic: string) => Promise<TopicOwner | null>,
  ): Promise<{ corrected: number; deleted: number }> {
    let corrected = 0;
    let deleted = 0;
    // Topic by topic: one owner read (a store's references) at a time, each read once.
    for (const { account_id: accountId, topic } of await this.store.topicsStartingWith(prefix)) {
      const found = await owner(accountId, topic);
      if (!found) continue;
      let emptied = false;
      let after = '';
      try {
        for (;;) {
          const rows = await this.store.settledHolds(accountId, topic, before, { after, limit: TOPIC_PAGE });
          for (const row of rows) {
            const want = found.gone ? 0 : (found.references.get(row.id) ?? 0);
            if (want !== row.holds) {
              const seen = { holds: row.holds, heldAt: row.held_at };
              if (!(await this.store.correctHolds(accountId, row.id, seen, want, this.nowIso()))) continue;
              corrected++;
            }
            // Only what an upload made: a topic named like a store's that never was one keeps the
            // documents API's documents.
            if (!found.gone || row.made_held !== 1) continue;
            if ((await this.store.claimUnheld(accountId, row.id, this.nowIso())) === null) continue;
            // Claimed: a delete that fails here is left at -1 and finished by the sweep.
            emptied = true;
            await this.store.delete(accountId, row.id, this.nowIso()).then(
              () => deleted++,
              () => undefined,
            );
          }
          if (rows.length < TOPIC_PAGE) break;
          after = rows.at(-1)?.id ?? after;
        }
      } finally {
        // Search forgets what went, even when the pass stopped part-way (the database failed a read).
        if (emptied) await this.onChunksGone(accountId, topic);
      }
    }
    return { corrected, deleted };
  }

  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  async recover(): Promise<number> {
    const jobs = await this.store.pending();
    for (const job of jobs) await this.queue.add(`process-${job.documentId}`, job);
    // Not the deletes marked lately: another process sharing the database may be running them (two
    // at once contend for the same rows, and one can fail its caller's request). The sweep takes the
    // rest within UNFINISHED_DELETE_MS.
    await this.finishDeletes(new Date(this.clock.now().getTime() - UNFINISHED_DELETE_MS).toISOString());
    return jobs.length;
  }

  /**
   * Queues processing and waits for it to end, up to `timeoutMs` (polling the row: the job may run in
   * another process). Ended → the document; failed → 422 with its reason; still running → null.
   */
  async processAndWait(
    accountId: string,
    id: string,
    job: Omit<ProcessJob, 'documentId' | 'accountId'>,
    timeoutMs: number,
  ) {
    await this.process(accountId, id, job);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await this.store.get(accountId, id);
      if (!row) throw notFound('DOCUMENT_NOT_FOUND', 'Document', id);
      if (row.processing === null) {
        if (row.status === 'failed')
          throw new AppError('UNPROCESSABLE', `Processing failed: ${row.error ?? 'unknown reason'}`, {
            documentId: id,
            error: row.error,
          });
        return documentView(row);
      }
      if (Date.now() >= deadline) return null;
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
    }
  }
}

/** A chunk as the API shows it. */
function chunkView(
  c: Pick<
    ChunksTable,
    'id' | 'chunk_index' | 'page_number' | 'start_offset' | 'end_offset' | 'text' | 'embedding_model'
  >,
) {
  return {
    chunkId: c.id,
    index: c.chunk_index,
    pageNumber: c.page_number,
    startOffset: c.start_offset,
    endOffset: c.end_offset,
    text: c.text,
    embeddingModel: c.embedding_model,
  };
}

/** The most chunks one page answers (a document may hold tens of thousands). */
export const MAX_CHUNK_PAGE = 1_000;

const chunkCursor = (index: number) => Buffer.from(`chunk:${index}`).toString('base64url');

/** The chunk index a cursor continues after; a cursor no page made is a 400. */
function chunkCursorIndex(cursor: string): number {
  const match = /^chunk:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1])
    throw validationError('Invalid query', [{ field: 'cursor', message: 'is not a valid cursor' }]);
  return Number(match[1]);
}
