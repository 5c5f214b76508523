import { AppError } from '../../core/errors.js';
import { bm25, queryTerms } from './bm25.js';
import type { Embedder } from './processor.js';
import { fuseRanks } from './rank-fusion.js';
import type { DocumentStore } from './store.js';
import type { RankedChunk } from './types.js';
import { VectorIndex } from './vector-index.js';

export const QUERY_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type QueryMode = (typeof QUERY_MODES)[number];

/** Keyword candidates the database returns per query (the BM25 pass reads at most these). */
const KEYWORD_CANDIDATES = 2_000;
/** How deep each list goes before fusion. */
const FUSION_DEPTH = 50;

export interface KnowledgeQuery {
  query: string;
  topK: number;
  topics?: string[];
  mode: QueryMode;
  minScore?: number;
  embeddingModel?: string;
  /** The key charged for embedding the query (charging.ts); absent or null: the account. */
  payerKeyId?: string | null;
}

/** Vectors read per page when a topic's index is (re)built: a few milliseconds each. */
const LOAD_PAGE = 1_000;
/** Characters of a query that are read (the HTTP route allows no more; the retriever may pass more). */
const MAX_QUERY_CHARS = 4_000;

/** A turn of the event loop between pages of a load. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Vectors of each (account, topic) in an in-process index, reloaded when the topic's version (count and
 * newest change of its indexed documents) moves: coherent across processes at the cost of one small
 * aggregate query per topic per query. A (re)load reads a page of vectors at a time with a turn of the
 * event loop between, into a key aside that goes live when complete; concurrent queries share one load.
 */
class VectorCache {
  private readonly index = new VectorIndex();
  private readonly versions = new Map<string, string>();
  private readonly models = new Map<string, string>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(private readonly store: DocumentStore) {}

  key(accountId: string, topic: string): string {
    return `${accountId}\u0000${topic}`;
  }

  invalidate(accountId: string, topic: string): void {
    this.versions.delete(this.key(accountId, topic));
  }

  /** The topic's index, fresh; returns the topic's embedding model (null when nothing is embedded). */
  async ensure(accountId: string, topic: string): Promise<string | null> {
    const key = this.key(accountId, topic);
    for (;;) {
      const version = await this.store.topicVersion(accountId, topic);
      if (this.versions.get(key) === version) return this.models.get(key) ?? null;
      const running = this.loading.get(key);
      if (running) {
        await running;
        continue;
      }
      const load = this.load(accountId, topic, key, version).finally(() => this.loading.delete(key));
      this.loading.set(key, load);
      await load;
      return this.models.get(key) ?? null;
    }
  }

  private async load(accountId: string, topic: string, key: string, version: string): Promise<void> {
    const staging = `${key}\u0000loading`;
    this.index.drop(staging);
    this.index.add(staging, []);
    let model: string | null = null;
    for (const documentId of await this.store.indexedDocumentIds(accountId, topic)) {
      let after = -1;
      for (;;) {
        const page = await this.store.embeddedChunks(documentId, after, LOAD_PAGE);
        if (page.last === null) break;
        model ??= page.rows.find((r) => r.embedding_model)?.embedding_model ?? null;
        if (page.rows.length > 0)
          this.index.add(
            staging,
            page.rows.map((r) => ({ id: r.id, vector: VectorIndex.fromBytes(r.embedding as Buffer) })),
          );
        after = page.last;
        await nextTurn();
        if (!page.more) break;
      }
    }
    this.index.move(staging, key);
    if (model) this.models.set(key, model);
    else this.models.delete(key);
    this.versions.set(key, version);
  }

  search(keys: string[], vector: number[], k: number): RankedChunk[] {
    const present = keys.filter((key) => this.index.has(key));
    return present.length === 0 ? [] : this.index.search(present, vector, k);
  }
}

/** Hybrid retrieval over an account's indexed chunks: BM25 keywords, cosine vectors, rank fusion. */
export class KnowledgeService {
  private readonly vectors: VectorCache;

  constructor(
    private readonly store: DocumentStore,
    private readonly embed: Embedder,
    private readonly defaultModel: string,
  ) {
    this.vectors = new VectorCache(store);
  }

  invalidate(accountId: string, topic: string): void {
    this.vectors.invalidate(accountId, topic);
  }

  async topics(accountId: string) {
    const rows = await this.store.topics(accountId);
    return rows.map((r) => ({
      topic: r.topic,
      documentCount: Number(r.documentCount),
      chunkCount: Number(r.chunkCount ?? 0),
      embeddingModel: r.embeddingModel ?? null,
      updatedAt: r.updatedAt,
    }));
  }

  async query(accountId: string, query: KnowledgeQuery) {
    const started = performance.now();
    const q = { ...query, query: query.query.slice(0, MAX_QUERY_CHARS) };
    const topics = q.topics && q.topics.length > 0 ? [...new Set(q.topics)] : null;
    const depth = Math.max(q.topK, FUSION_DEPTH);
    const wantKeyword = q.mode !== 'vector';
    const wantVector = q.mode !== 'keyword';

    let keyword: RankedChunk[] = [];
    if (wantKeyword) {
      const terms = queryTerms(q.query);
      const candidates = await this.store.keywordCandidates(accountId, topics, terms, KEYWORD_CANDIDATES);
      const total = await this.store.indexedChunkCount(accountId, topics);
      keyword = bm25(terms, candidates, total).slice(0, depth);
    }

    let vector: RankedChunk[] = [];
    if (wantVector) {
      const names = topics ?? (await this.topics(accountId)).map((t) => t.topic);
      const byModel = new Map<string, string[]>();
      for (const topic of names) {
        const model = await this.vectors.ensure(accountId, topic);
        if (!model) continue;
        if (q.embeddingModel && model !== q.embeddingModel)
          throw new AppError(
            'CONFLICT',
            `Topic '${topic}' is embedded with '${model}', not '${q.embeddingModel}'`,
            { topic, topicModel: model, queryModel: q.embeddingModel },
          );
        byModel.set(model, [...(byModel.get(model) ?? []), this.vectors.key(accountId, topic)]);
      }
      for (const [model, keys] of byModel) {
        const [queryVector] = await this.embed([q.query], model, {
          accountId,
          keyId: q.payerKeyId ?? null,
        });
        vector.push(...this.vectors.search(keys, queryVector ?? [], depth));
      }
      vector = vector.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1)).slice(0, depth);
    }

    let ranked: Array<{
      chunkId: string;
      score: number;
      keywordRank: number | null;
      vectorRank: number | null;
    }>;
    if (q.mode === 'hybrid') {
      ranked = fuseRanks([keyword, vector]).map((f) => ({
        chunkId: f.chunkId,
        score: f.score,
        keywordRank: f.ranks[0] ?? null,
        vectorRank: f.ranks[1] ?? null,
      }));
    } else {
      const list = q.mode === 'keyword' ? keyword : vector;
      ranked = list.map((r, i) => ({
        chunkId: r.chunkId,
        score: r.score,
        keywordRank: q.mode === 'keyword' ? i + 1 : null,
        vectorRank: q.mode === 'vector' ? i + 1 : null,
      }));
    }
    if (q.minScore !== undefined) ranked = ranked.filter((r) => r.score >= (q.minScore as number));
    ranked = ranked.slice(0, q.topK);
    const described = new Map(
      (await this.store.describe(ranked.map((r) => r.chunkId))).map((d) => [d.chunkId, d]),
    );
    const results = ranked.flatMap((r) => {
      const d = described.get(r.chunkId);
      return d ? [{ ...d, score: r.score, keywordRank: r.keywordRank, vectorRank: r.vectorRank }] : [];
    });
    return { results, tookMs: Math.round((performance.now() - started) * 100) / 100, mode: q.mode };
  }

  get embeddingModel(): string {
    return this.defaultModel;
  }
}
