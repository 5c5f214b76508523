/**
 * A public retrieval benchmark in BEIR's format (BEIR SciFact: ~5k abstracts, 300 test queries), judged
 * through the public API on the embedded default. Opt in: `npm run eval:knowledge -- --beir <dir>`
 * (`--scifact <dir>` is the same). Nothing is downloaded and no data is committed: `<dir>` holds the
 * set as BEIR distributes it, `corpus.jsonl` (`{_id, title, text}`), `queries.jsonl` (`{_id, text}`) and
 * `qrels/test.tsv` (`query-id corpus-id score`, a header line first).
 *
 * Each corpus document is loaded as one document (title, blank line, text) and processed with the
 * default chunking; a query's ranking of chunks becomes a ranking of documents by each document's best
 * chunk (BEIR's MaxP), read from `topK` 200 chunks. Prints nDCG@10 (trec_eval's linear gain, as BEIR's
 * pytrec_eval) and Recall@50 per mode.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestPlatform } from '../test/helpers/platform.js';

export const BEIR_MODES = ['keyword', 'vector', 'hybrid'] as const;
export type BeirMode = (typeof BEIR_MODES)[number];

export interface BeirSet {
  corpus: Array<{ id: string; title: string; text: string }>;
  queries: Array<{ id: string; text: string }>;
  /** query id → document id → graded relevance (> 0). */
  qrels: Map<string, Map<string, number>>;
}

export interface BeirScores {
  ndcg10: number;
  recall50: number;
  queries: number;
}

const CHUNK_DEPTH = 200;
/** Documents loaded at once: the platform processes them concurrently, as a bulk import would. */
const LOAD_CONCURRENCY = 4;

function jsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** Reads a BEIR data set; only the queries that have judgments in `qrels/<split>.tsv` are kept. */
export function readBeir(dir: string, split = 'test'): BeirSet {
  const qrels = new Map<string, Map<string, number>>();
  const lines = readFileSync(path.join(dir, 'qrels', `${split}.tsv`), 'utf8')
    .split('\n')
    .slice(1);
  for (const line of lines) {
    const [query, doc, score] = line.trim().split(/\s+/);
    if (query === undefined || doc === undefined || !(Number(score) > 0)) continue;
    if (!qrels.has(query)) qrels.set(query, new Map());
    qrels.get(query)!.set(doc, Number(score));
  }
  const corpus = jsonLines<{ _id: string; title?: string; text?: string }>(
    path.join(dir, 'corpus.jsonl'),
  ).map((d) => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }));
  const queries = jsonLines<{ _id: string; text: string }>(path.join(dir, 'queries.jsonl'))
    .map((q) => ({ id: String(q._id), text: q.text }))
    .filter((q) => qrels.has(q.id));
  return { corpus, queries, qrels };
}

/** nDCG@k with linear gain (trec_eval's `ndcg_cut`), and Recall@k, of one ranking of document ids. */
export function judgeRanking(
  ranking: string[],
  relevant: Map<string, number>,
): { ndcg10: number; recall50: number } {
  let dcg = 0;
  for (let i = 0; i < Math.min(10, ranking.length); i++)
    dcg += (relevant.get(ranking[i]!) ?? 0) / Math.log2(i + 2);
  const ideal = [...relevant.values()]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  const found = ranking.slice(0, 50).filter((id) => relevant.has(id)).length;
  return { ndcg10: ideal === 0 ? 0 : dcg / ideal, recall50: relevant.size === 0 ? 0 : found / relevant.size };
}

async function ok<T>(p: TestPlatform, method: 'GET' | 'POST', url: string, payload?: object): Promise<T> {
  const res = await p.request({ method, url, ...(payload === undefined ? {} : { payload }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as T;
}

/** Loads and indexes the corpus through the API; returns platform document id → corpus id. */
export async function ingestBeir(p: TestPlatform, set: BeirSet, topic: string): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < set.corpus.length) {
      const doc = set.corpus[next++]!;
      const content = doc.title === '' ? doc.text : `${doc.title}\n\n${doc.text}`;
      const loaded = await ok<{ documentId: string }>(p, 'POST', '/api/documents/load', {
        source: 'text',
        content,
        title: doc.title.slice(0, 200) || doc.id,
        topic,
      });
      await ok(p, 'POST', `/api/documents/${loaded.documentId}/process?wait=true`, {});
      ids.set(loaded.documentId, doc.id);
    }
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  return ids;
}

/** Asks every judged query in each mode; the mean nDCG@10 and Recall@50 per mode. */
export async function judgeBeir(
  p: TestPlatform,
  set: BeirSet,
  ids: Map<string, string>,
  topic: string,
  modes: readonly BeirMode[] = BEIR_MODES,
): Promise<Record<string, BeirScores>> {
  const out: Record<string, BeirScores> = {};
  for (const mode of modes) {
    let ndcg = 0;
    let recall = 0;
    for (const q of set.queries) {
      const res = await ok<{ results: Array<{ documentId: string }> }>(p, 'POST', '/api/knowledge/query', {
        query: q.text,
        mode,
        topK: CHUNK_DEPTH,
        topics: [topic],
      });
      // MaxP: a document ranks where its best chunk does.
      const ranking = [...new Set(res.results.map((r) => ids.get(r.documentId) ?? r.documentId))];
      const s = judgeRanking(ranking, set.qrels.get(q.id)!);
      ndcg += s.ndcg10;
      recall += s.recall50;
    }
    const n = set.queries.length || 1;
    out[mode] = { ndcg10: ndcg / n, recall50: recall / n, queries: set.queries.length };
  }
  return out;
}
