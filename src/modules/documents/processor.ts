import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Payer } from './charging.js';
import type { DocumentCpu } from './document-cpu.js';
import type { ProcessJob } from './document-service.js';
import type { DocumentRow, DocumentStore } from './store.js';
import type { ChunksTable } from './tables.js';
import { VectorIndex } from './vector-index.js';

/**
 * Embeds texts with a registry model through the gateway, charged to the payer (charging.ts). `model`
 * is the one that answered: a fallback's name when the asked model's chain fell back.
 */
export type Embedder = (
  texts: string[],
  model: string,
  payer: Payer,
) => Promise<{ vectors: number[][]; model: string }>;

/**
 * Chunks embedded and written per round: each round is a read, an embedding call through the gateway
 * (budget, record) and a write transaction, so larger rounds ingest faster (64 → 256 measured); the
 * embedder works on a CPU worker when a round's text is large.
 */
const EMBED_BATCH = 256;
/**
 * A document of at most one embedding batch whose text and terms are at most this many characters is
 * written in one transaction (`runAtOnce`); a larger one a batch at a time, so no transaction holds
 * SQLite's single connection for long.
 */
const ONE_WRITE_CHARS = 1024 * 1024;
/**
 * Chunks written since the planner's statistics were last refreshed that make the next refresh due:
 * after a bulk ingest PostgreSQL would otherwise plan keyword queries for an empty table.
 */
const ANALYZE_EVERY = 5_000;

/** A turn of the event loop between embedding batches (an inline embedder never leaves it otherwise). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The vector scaled to unit length, in `VectorIndex.toBytes` form (one pass, no intermediate array). */
function unitBytes(vector: readonly number[]): Buffer {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  const scale = norm === 0 ? 1 : 1 / Math.sqrt(norm);
  const floats = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) floats[i] = vector[i]! * scale;
  return VectorIndex.floatBytes(floats);
}

/**
 * Runs a document's processing job: chunk (replacing its chunks), embed in batches, index. The document's
 * status follows each step; a failure marks it `failed` with the reason. The job's parameters are read
 * from the document, so a request made while it ran is honoured by one more run.
 *
 * Nothing here holds the event loop for long: chunking runs in a CPU worker, and chunks are written a
 * batch per transaction. While they are written the document is `loaded` with no chunks counted (out of
 * search and chunk listings); it becomes `chunked` once all are in, and a failure removes what was written.
 */
export class DocumentProcessor {
  private writtenSinceAnalyze = 0;
  private analyzing: Promise<void> | null = null;

  constructor(
    private readonly store: DocumentStore,
    private readonly cpu: DocumentCpu,
    private readonly embed: Embedder,
    private readonly clock: Clock,
    private readonly onIndexChanged: (accountId: string, topic: string) => void,
    /** The language a topic's chunks are indexed in (language.ts; English unless configured). */
    private readonly languageOf: (topic: string) => string = () => 'english',
  ) {}

  async handle(job: ProcessJob): Promise<void> {
    for (let runs = 0; runs < 3; runs++) {
      const row = await this.store.get(job.accountId, job.documentId);
      // Deleted, being deleted (holds -1: its chunks are going), or already done.
      if (!row?.processing || row.holds < 0) return;
      const params = JSON.parse(row.processing) as ProcessJob;
      let ended: boolean | null;
      try {
        ended = await this.run(row, params);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const failed = { status: 'failed', error: reason.slice(0, 2000), updated_at: this.now() };
        if (await this.store.finish(row.id, row.processing, failed)) return;
        continue;
      }
      // Asked again while this run went on: run once more with the newer parameters.
      if (ended ?? (await this.store.clearProcessing(row.id, row.processing))) return;
    }
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /**
   * Runs the job's operations on the document (its row as `handle` read it). Returns whether the job
   * ended with the last write (a document of one batch), or null when `handle` still has to end it.
   */
  private async run(doc: DocumentRow, job: ProcessJob): Promise<boolean | null> {
    const ops = new Set(job.operations);
    if (ops.has('chunk')) {
      const pages = (await this.store.pages(doc.id)).map((p) => ({
        pageNumber: p.page_number,
        text: p.text,
      }));
      const language = this.languageOf(doc.topic);
      const packed = await this.cpu.chunk(
        pages,
        { chunkSize: job.chunkSize, chunkOverlap: job.chunkOverlap },
        language,
        doc.account_id,
      );
      const count = packed.termEnds.length;
      const rowAt = (i: number): ChunksTable => {
        const page = pages[packed.bounds[i * 3]!]!;
        return {
          id: newId('chk'),
          document_id: doc.id,
          account_id: doc.account_id,
          topic: doc.topic,
          chunk_index: i,
          page_number: page.pageNumber,
          start_offset: packed.bounds[i * 3 + 1]!,
          end_offset: packed.bounds[i * 3 + 2]!,
          text: page.text.slice(packed.bounds[i * 3 + 1]!, packed.bounds[i * 3 + 2]!),
          terms: packed.terms.slice(i === 0 ? 0 : packed.termEnds[i - 1]!, packed.termEnds[i]!),
          embedding_model: null,
        };
      };
      if (count > 0 && count <= EMBED_BATCH && packed.terms.length + charsOf(pages) <= ONE_WRITE_CHARS)
        return this.runAtOnce(
          doc,
          job,
          ops,
          language,
          Array.from({ length: count }, (_, i) => rowAt(i)),
        );
      await this.store.setStatus(doc.id, 'loaded', {
        error: null,
        chunk_count: 0,
        embedding_model: null,
        updated_at: this.now(),
      });
      this.onIndexChanged(doc.account_id, doc.topic);
      try {
        await this.store.clearChunks(doc.id);
        await this.store.insertChunks(count, rowAt);
      } catch (error) {
        // Never a half-written document: what was written goes, and the caller marks it failed.
        await this.store.clearChunks(doc.id).catch(() => undefined);
        throw error;
      }
      await this.store.setStatus(doc.id, 'chunked', {
        error: null,
        chunk_count: count,
        language,
        embedding_model: null,
        updated_at: this.now(),
      });
      this.onIndexChanged(doc.account_id, doc.topic);
    }
    if (ops.has('embed')) {
      // A batch of chunks at a time, read by index: a large document's text is never all in one read.
      let batch = await this.store.chunksOf(doc.id).orderBy('chunk_index').limit(EMBED_BATCH).execute();
      if (batch.length === 0) throw new Error('the document has no chunks: chunk it first');
      // The vectors are stored under the model that answered, not the one asked: a fallback to another
      // embedding model answers in another vector space. Every batch of a document in one space.
      let answeredBy: string | null = null;
      while (batch.length > 0) {
        const answer = await this.embed(
          batch.map((c) => c.text),
          job.embeddingModel,
          { accountId: job.accountId, keyId: job.payerKeyId ?? null },
        );
        if (answeredBy !== null && answer.model !== answeredBy)
          throw new Error(
            `embeddings of one document came from two models ('${answeredBy}', then '${answer.model}'): process it again`,
          );
        answeredBy = answer.model;
        const after = batch.at(-1)!.chunk_index;
        await nextTurn();
        const next = await this.store
          .chunksOf(doc.id)
          .where('chunk_index', '>', after)
          .orderBy('chunk_index')
          .limit(EMBED_BATCH)
          .execute();
        await this.store.setEmbeddings(
          doc.id,
          answeredBy,
          batch.map((c, j) => ({ id: c.id, embedding: unitBytes(answer.vectors[j] ?? []) })),
          next.length === 0
            ? { status: 'embedded', embedding_model: answeredBy, error: null, updated_at: this.now() }
            : {},
        );
        batch = next;
      }
    }
    if (ops.has('index')) {
      const current = await this.store.get(job.accountId, job.documentId);
      if (!current) return null;
      if (current.status !== 'embedded' && current.status !== 'indexed' && current.status !== 'chunked')
        throw new Error(`the document is ${current.status}: chunk (and embed) it first`);
      // Keyword search works on chunks alone (the full-text index follows the rows); vectors when embedded.
      await this.store.setIndexed(current, this.now());
      this.onIndexChanged(current.account_id, current.topic);
      this.indexed(current.chunk_count);
    }
    return null;
  }

  /**
   * A document of one embedding batch, in as few round trips as its result allows: chunked (in the
   * caller), embedded in memory, then written whole in one transaction that also ends the job
   * (`replaceDocument`) — about ten statements a document instead of thirty. An embedding that fails
   * leaves what the step-by-step way leaves: the new chunks without vectors, then `failed`.
   */
  private async runAtOnce(
    doc: DocumentRow,
    job: ProcessJob,
    ops: Set<string>,
    language: string,
    rows: ChunksTable[],
  ): Promise<boolean> {
    const expected = doc.processing;
    const chunked = { error: null, chunk_count: rows.length, language, updated_at: this.now() };
    let vectors: Buffer[] | null = null;
    let model: string | null = null;
    if (ops.has('embed')) {
      try {
        const answer = await this.embed(
          rows.map((r) => r.text),
          job.embeddingModel,
          { accountId: job.accountId, keyId: job.payerKeyId ?? null },
        );
        model = answer.model;
        vectors = rows.map((_, j) => unitBytes(answer.vectors[j] ?? []));
      } catch (error) {
        await this.store.replaceDocument(
          doc,
          rows,
          null,
          { ...chunked, status: 'chunked', embedding_model: null },
          // The job is ended by `handle`, with the failure.
          { indexed: false, expected: null },
        );
        this.onIndexChanged(doc.account_id, doc.topic);
        throw error;
      }
      for (const row of rows) row.embedding_model = model;
    }
    const indexed = ops.has('index');
    const status = indexed ? 'indexed' : model !== null ? 'embedded' : 'chunked';
    const ended = await this.store.replaceDocument(
      doc,
      rows,
      vectors,
      { ...chunked, status, embedding_model: model },
      { indexed, expected },
    );
    this.onIndexChanged(doc.account_id, doc.topic);
    if (indexed) this.indexed(rows.length);
    return ended;
  }

  /** Counts chunks indexed; past `ANALYZE_EVERY` since the last refresh, refreshes the statistics. */
  private indexed(chunks: number): void {
    this.writtenSinceAnalyze += chunks;
    if (this.writtenSinceAnalyze >= ANALYZE_EVERY && !this.analyzing) {
      this.writtenSinceAnalyze = 0;
      // In the background: statistics are an optimisation, never a reason to fail or delay a job.
      this.analyzing = this.store
        .analyze()
        .catch(() => undefined)
        .finally(() => {
          this.analyzing = null;
        });
    }
  }
}

function charsOf(pages: Array<{ text: string }>): number {
  return pages.reduce((n, p) => n + p.text.length, 0);
}
