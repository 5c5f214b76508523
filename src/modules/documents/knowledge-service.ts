import { AppError } from '../../core/errors.js';
import { bm25Bound, bm25Tokenized, queryTerms, type Tokenized, tokenize } from './bm25.js';
import type { Embedder } from './processor.js';
import { fuseRanks, fuseScores } from './rank-fusion.js';
import type { DocumentStore } from './store.js';
import type { RankedChunk } from './types.js';
import { VectorCache } from './vector-cache.js';

export const QUERY_MODES = ['hybrid', 'vector', 'keyword'] as const;
type QueryMode = (typeof QUERY_MODES)[number];

/**
 * Keyword search ranks every chunk that matches, then cuts (knowledge-service.ts `keyword`): each query
 * term's document frequency is counted on the index (up to `DF_CAP`); the rarest terms whose matches
 * add up to at most `OR_BUDGET` are fetched whole; chunks that hold none of them but all of the query's
 * terms are added (up to `ALL_CAP`), and the ranking is exact when the k-th score beats the best a chunk
 * of the remaining (frequent) terms alone could reach. Otherwise those terms' first matches are added too.
 */
const DF_CAP = 20_000;
const OR_BUDGET = 4_000;
const ALL_CAP = 2_000;
/** How deep each list goes before fusion (at least the query's topK). */
const FUSION_DEPTH = 50;
/** The largest `topK` a query may ask for. */
export const MAX_TOP_K = 200;

/**
 * Weights of the hybrid fusion. By default each list's scores are divided by its best and a chunk
 * scores Σ weight × scaled score (`fuseScores`); with `fusion: 'rank'`, Σ weight / (60 + rank) (weighted
 * reciprocal-rank fusion). Keyword scores count more: the default embedder is lexical too, so its list
 * mostly agrees with BM25's, and where it does not it is more often wrong. On `npm run eval:knowledge`
 * every vector weight from 0.1 to 1 kept the hybrid above keyword search alone; 0.2 scored best
 * (docs/decisions.md has the figures).
 */
const DEFAULT_FUSION_WEIGHTS = { keyword: 1, vector: 0.2 } as const;
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
/** The vector cache's bound when none is configured (KNOWLEDGE_VECTOR_CACHE_MB). */
const DEFAULT_VECTOR_CACHE_BYTES = 512 * 1024 * 1024;

/** The keyword pass's bounds (`DF_CAP`, `OR_BUDGET`, `ALL_CAP` by default; tests make them small). */
export interface KeywordBounds {
  dfCap: number;
  orBudget: number;
  allCap: number;
}

/** Hybrid retrieval over an account's indexed chunks: BM25 keywords, cosine vectors, rank fusion. */
export class KnowledgeService {
  private readonly vectors: VectorCache;
  private readonly bounds: KeywordBounds;

  constructor(
    private readonly store: DocumentStore,
    private readonly embed: Embedder,
    private readonly defaultModel: string,
    bounds: Partial<KeywordBounds> = {},
    vectorCacheBytes = DEFAULT_VECTOR_CACHE_BYTES,
  ) {
    this.vectors = new VectorCache(store, vectorCacheBytes);
    this.bounds = { dfCap: DF_CAP, orBudget: OR_BUDGET, allCap: ALL_CAP, ...bounds };
  }

  invalidate(accountId: string, topic: string): void {
    this.vectors.invalidate(accountId, topic);
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

    let keyword: RankedChunk[] = [];
    if (wantKeyword) keyword = await this.keyword(accountId, topics, q.query, depth);

    let vector: RankedChunk[] = [];
    if (wantVector) {
      const names = topics ?? (await this.topics(accountId)).map((t) => t.topic);
      const release = this.vectors.pin(names.map((topic) => this.vectors.key(accountId, topic)));
      try {
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
          const answer = await this.embed([q.query], model, { accountId, keyId: q.payerKeyId ?? null });
          // A fallback's vector lies in another space than the topic's: no vector ranking then.
          if (answer.model !== model) continue;
          const [queryVector] = answer.vectors;
          vector.push(...this.vectors.search(keys, queryVector ?? [], depth));
        }
      } finally {
        release();
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
      const weights = { ...DEFAULT_FUSION_WEIGHTS, ...q.weights };
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
   * The `depth` best chunks by BM25 among every indexed chunk of the topics that holds a query term.
   * Terms are fetched rarest first (see `OR_BUDGET`); a query of stop words only finds nothing.
   */
  private async keyword(
    accountId: string,
    topics: string[] | null,
    query: string,
    depth: number,
  ): Promise<RankedChunk[]> {
    const languages = await this.store.languagesOf(accountId, topics);
    if (languages.length === 0) return [];
    const terms = queryTerms(query, languages);
    if (terms.length === 0) return [];
    const { dfCap, orBudget, allCap } = this.bounds;
    const df = await this.store.termCounts(accountId, topics, terms, dfCap);
    const present = terms.filter((t) => (df.get(t) ?? 0) > 0).sort((a, b) => df.get(a)! - df.get(b)!);
    if (present.length === 0) return [];
    const selective: string[] = [];
    let budget = orBudget;
    for (const term of present) {
      const n = df.get(term)!;
      if (n > budget) break;
      selective.push(term);
      budget -= n;
    }
    const frequent = present.slice(selective.length);
    // Each candidate is tokenized once, whichever pass fetched it (the ranking may run three times).
    const candidates = new Map<string, Tokenized>();
    const wanted = new Set(present);
    const add = (rows: Array<{ id: string; terms: string }>) => {
      for (const row of rows) if (!candidates.has(row.id)) candidates.set(row.id, tokenize(wanted, row));
    };
    add(await this.store.keywordCandidates(accountId, topics, selective, 'any', orBudget));
    const total = await this.store.indexedChunkCount(accountId, topics);
    const rank = () => bm25Tokenized(present, [...candidates.values()], total, df);
    if (frequent.length === 0) return rank().slice(0, depth);
    if (present.length > 1)
      add(await this.store.keywordCandidates(accountId, topics, present, 'all', allCap));
    let ranked = rank();
    // A chunk not fetched holds only frequent terms: if the k-th score beats the most those can give,
    // the ranking is exact; otherwise the frequent terms' first matches join (best effort).
    const kth = ranked[depth - 1]?.score ?? 0;
    if (kth < bm25Bound(frequent, df, total)) {
      add(await this.store.keywordCandidates(accountId, topics, frequent, 'any', orBudget));
      ranked = rank();
    }
    return ranked.slice(0, depth);
  }

  get embeddingModel(): string {
    return this.defaultModel;
  }
}
