import { AppError } from '../../core/errors.js';
import { queryTerms } from './bm25.js';
import type { Embedder } from './processor.js';
import { fuseRanks, fuseScores } from './rank-fusion.js';
import type { DocumentStore } from './store.js';
import { TopicSnapshots } from './topic-snapshot.js';
import type { RankedChunk } from './types.js';
import { VectorCache } from './vector-cache.js';

export const QUERY_MODES = ['hybrid', 'vector', 'keyword'] as const;
type QueryMode = (typeof QUERY_MODES)[number];

/** How deep each list goes before fusion (at least the query's topK). */
const FUSION_DEPTH = 50;
/** The largest `topK` a query may ask for. */
export const MAX_TOP_K = 200;

/**
 * Weights of the hybrid fusion. By default each list's scores are divided by its best and a chunk
 * scores Σ weight × scaled score (`fuseScores`); with `fusion: 'rank'`, Σ weight / (60 + rank) (weighted
 * reciprocal-rank fusion). Keyword scores count more: the default embedder is lexical too, so its list
 * mostly agrees with BM25's, and where it does not it is more often wrong. With 2,000-character chunks
 * vector weight 0.1 scored best on BEIR SciFact (hybrid nDCG@10 0.691) and kept the hybrid above keyword
 * search alone on `npm run eval:knowledge` (docs/decisions.md has the figures); the vector weight is the
 * server's `KNOWLEDGE_VECTOR_WEIGHT`, and a query may give both.
 */
export const DEFAULT_FUSION_WEIGHTS = { keyword: 1, vector: 0.1 } as const;
export const FUSIONS = ['score', 'rank'] as const;
interface FusionWeights {
  keyword: number;
  vector: number;
}

export interface KnowledgeQuery {
  query: string;
  topK: number;
  topics?: string[];
  mode: QueryMode;
  minScore?: number;
  embeddingModel?: string;
  /** Overrides `DEFAULT_FUSION_WEIGHTS` for this query (hybrid mode). */
  weights?: Partial<FusionWeights>;
  /** How the hybrid mode fuses its lists: normalised scores (default) or reciprocal ranks. */
  fusion?: (typeof FUSIONS)[number];
  /** The key charged for embedding the query (charging.ts); absent or null: the account. */
  payerKeyId?: string | null;
}

/** Characters of a query that are read (the HTTP route allows no more; the retriever may pass more). */
const MAX_QUERY_CHARS = 4_000;
/** The share of the cache a boot's warming may fill: the rest is left to what queries ask for. */
const WARM_SHARE = 0.5;
/** The vector cache's bound when none is configured (KNOWLEDGE_VECTOR_CACHE_MB). */
const DEFAULT_VECTOR_CACHE_BYTES = 512 * 1024 * 1024;

/** Hybrid retrieval over an account's indexed chunks: BM25 keywords, cosine vectors, rank fusion. */
export class KnowledgeService {
  private readonly vectors: VectorCache;

  constructor(
    private readonly store: DocumentStore,
    private readonly embed: Embedder,
    private readonly defaultModel: string,
    vectorCacheBytes = DEFAULT_VECTOR_CACHE_BYTES,
    /** The share of the cache one account may hold once it is full (KNOWLEDGE_VECTOR_CACHE_ACCOUNT_PERCENT). */
    accountShare = 1,
    /**
     * Where held topics are saved so a restart loads them from one file each (topic-snapshot.ts):
     * DATA_DIR/knowledge-cache; null keeps nothing on disk.
     */
    snapshots: { dir: string; delayMs?: number; maxBytes?: number } | null = null,
    /** The hybrid fusion's weights when a query gives none (KNOWLEDGE_VECTOR_WEIGHT). */
    private readonly fusionWeights: FusionWeights = DEFAULT_FUSION_WEIGHTS,
  ) {
    this.vectors = new VectorCache(
      store,
      vectorCacheBytes,
      accountShare,
      snapshots && TopicSnapshots.available() && snapshots.maxBytes !== 0
        ? new TopicSnapshots(snapshots.dir, snapshots.maxBytes)
        : null,
      snapshots?.delayMs,
    );
  }

  /** Topics this process loaded from a snapshot, for tests and figures. */
  snapshotLoads(): number {
    return this.vectors.snapshotLoads;
  }

  invalidate(accountId: string, topic: string): void {
    this.vectors.invalidate(accountId, topic);
  }

  /** A document of the topic was deleted: its snapshot goes with it (vector-cache.ts). */
  forget(accountId: string, topic: string): Promise<void> {
    return this.vectors.forget(accountId, topic);
  }

  /** Removes the snapshots of topics with no indexed document left (run at start). */
  prune(): Promise<number> {
    return this.vectors.prune();
  }

  /**
   * Loads up to `topics` of the most recently changed topics into the cache (while they fit in half of
   * it), so the first query after a start does not wait for a whole load. Run in the background at boot.
   */
  warm(topics: number): Promise<number> {
    return this.vectors.warm(topics, WARM_SHARE);
  }

  /** Stops warming and loads at their next page (before the database closes). */
  close(): Promise<void> {
    return this.vectors.close();
  }

  /** Topics whose vectors this process holds (bounded by the cache's bytes). */
  vectorCacheHeld(): number {
    return this.vectors.held();
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

    const names = topics ?? (await this.topics(accountId)).map((t) => t.topic);
    const keys = names.map((topic) => this.vectors.key(accountId, topic));
    // Both indexes live in the cache: its topics stay held until the query ends.
    const release = this.vectors.pin(keys);
    let keyword: RankedChunk[] = [];
    let vector: RankedChunk[] = [];
    try {
      const models = new Map<string, string | null>();
      for (const topic of names) models.set(topic, await this.vectors.ensure(accountId, topic));
      if (wantKeyword) keyword = await this.keyword(accountId, topics, keys, q.query, depth);
      if (wantVector) {
        const byModel = new Map<string, string[]>();
        for (const topic of names) {
          const model = models.get(topic);
          if (!model) continue;
          if (q.embeddingModel && model !== q.embeddingModel)
            throw new AppError(
              'CONFLICT',
              `Topic '${topic}' is embedded with '${model}', not '${q.embeddingModel}'`,
              { topic, topicModel: model, queryModel: q.embeddingModel },
            );
          byModel.set(model, [...(byModel.get(model) ?? []), this.vectors.key(accountId, topic)]);
        }
        for (const [model, modelKeys] of byModel) {
          const answer = await this.embed([q.query], model, { accountId, keyId: q.payerKeyId ?? null });
          // A fallback's vector lies in another space than the topic's: no vector ranking then.
          if (answer.model !== model) continue;
          const [queryVector] = answer.vectors;
          vector.push(...this.vectors.search(modelKeys, queryVector ?? [], depth));
        }
        vector = vector.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1)).slice(0, depth);
      }
    } finally {
      release();
    }

    let ranked: Array<{
      chunkId: string;
      score: number;
      keywordRank: number | null;
      vectorRank: number | null;
    }>;
    if (q.mode === 'hybrid') {
      const weights = { ...this.fusionWeights, ...q.weights };
      const fuse =
        q.fusion === 'rank'
          ? fuseRanks([keyword, vector], 60, [weights.keyword, weights.vector])
          : fuseScores([keyword, vector], [weights.keyword, weights.vector]);
      ranked = fuse.map((f) => ({
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

  /**
   * The `depth` best chunks by BM25 among every indexed chunk of the topics that holds a query term,
   * ranked in process over the topics' keyword index (keyword-index.ts, held by the cache beside the
   * vectors): every match is scored, then the list is cut. A query of stop words only finds nothing.
   */
  private async keyword(
    accountId: string,
    topics: string[] | null,
    keys: string[],
    query: string,
    depth: number,
  ): Promise<RankedChunk[]> {
    if (keys.length === 0) return [];
    const languages = await this.store.languagesOf(accountId, topics);
    if (languages.length === 0) return [];
    const terms = queryTerms(query, languages);
    if (terms.length === 0) return [];
    return this.vectors.searchKeywords(keys, terms, depth);
  }

  get embeddingModel(): string {
    return this.defaultModel;
  }
}
