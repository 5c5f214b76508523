import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Payer } from './charging.js';
import { splitPages } from './chunker.js';
import type { ProcessJob } from './document-service.js';
import type { DocumentStore } from './store.js';
import { VectorIndex } from './vector-index.js';

/** Embeds texts with a registry model through the gateway, charged to the payer (charging.ts). */
export type Embedder = (texts: string[], model: string, payer: Payer) => Promise<number[][]>;

const EMBED_BATCH = 64;

function unit(vector: readonly number[]): number[] {
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  return norm === 0 ? [...vector] : vector.map((v) => v / norm);
}

/**
 * Runs a document's processing job: chunk (replacing its chunks atomically), embed in batches, index.
 * The document's status follows each step; a failure marks it `failed` with the reason. The job's
 * parameters are read from the document, so a request made while it ran is honoured by one more run.
 */
export class DocumentProcessor {
  constructor(
    private readonly store: DocumentStore,
    private readonly embed: Embedder,
    private readonly clock: Clock,
    private readonly onIndexChanged: (accountId: string, topic: string) => void,
  ) {}

  async handle(job: ProcessJob): Promise<void> {
    for (let runs = 0; runs < 3; runs++) {
      const row = await this.store.get(job.accountId, job.documentId);
      if (!row?.processing) return; // deleted, or already done
      const params = JSON.parse(row.processing) as ProcessJob;
      try {
        await this.run(params);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        await this.store.setStatus(row.id, 'failed', {
          error: reason.slice(0, 2000),
          updated_at: this.now(),
        });
        if (await this.store.clearProcessing(row.id, row.processing)) return;
        continue;
      }
      // Asked again while this run went on: run once more with the newer parameters.
      if (await this.store.clearProcessing(row.id, row.processing)) return;
    }
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private async run(job: ProcessJob): Promise<void> {
    const doc = await this.store.get(job.accountId, job.documentId);
    if (!doc) return;
    const ops = new Set(job.operations);
    if (ops.has('chunk')) {
      const pages = await this.store.pages(doc.id);
      const chunks = splitPages(
        pages.map((p) => ({ pageNumber: p.page_number, text: p.text })),
        { chunkSize: job.chunkSize, chunkOverlap: job.chunkOverlap },
      ).map((c) => ({ ...c, id: newId('chk') }));
      await this.store.replaceChunks(doc, chunks, {
        status: 'chunked',
        error: null,
        chunk_count: chunks.length,
        embedding_model: null,
        updated_at: this.now(),
      });
      this.onIndexChanged(doc.account_id, doc.topic);
    }
    if (ops.has('embed')) {
      const chunks = await this.store.chunksOf(doc.id).orderBy('chunk_index').execute();
      if (chunks.length === 0) throw new Error('the document has no chunks: chunk it first');
      for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
        const batch = chunks.slice(i, i + EMBED_BATCH);
        const vectors = await this.embed(
          batch.map((c) => c.text),
          job.embeddingModel,
          { accountId: job.accountId, keyId: job.payerKeyId ?? null },
        );
        const last = i + EMBED_BATCH >= chunks.length;
        await this.store.setEmbeddings(
          doc.id,
          job.embeddingModel,
          batch.map((c, j) => ({ id: c.id, embedding: VectorIndex.toBytes(unit(vectors[j] ?? [])) })),
          last
            ? { status: 'embedded', embedding_model: job.embeddingModel, error: null, updated_at: this.now() }
            : {},
        );
      }
    }
    if (ops.has('index')) {
      const current = await this.store.get(job.accountId, job.documentId);
      if (!current) return;
      if (current.status !== 'embedded' && current.status !== 'indexed' && current.status !== 'chunked')
        throw new Error(`the document is ${current.status}: chunk (and embed) it first`);
      // Keyword search works on chunks alone (the full-text index follows the rows); vectors when embedded.
      await this.store.setStatus(current.id, 'indexed', { error: null, updated_at: this.now() });
      this.onIndexChanged(current.account_id, current.topic);
    }
  }
}
