/**
 * Keyword ranking in process: Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N − df + 0.5) / (df + 0.5)), avgdl
 * the searched chunks' mean length in words) over the chunks' stored terms; keyword-index.ts applies it
 * to every match of a topic's in-process index, so SQLite and PostgreSQL return the same order. Words are stemmed in the document's language on both
 * sides (language.ts). Stop words are dropped from queries (not from the index: a phrase still finds its
 * chunk by its other words).
 */
import { stemmerOf } from './language.js';

const WORD = /[\p{L}\p{N}]+/gu;
const MAX_QUERY_TERMS = 32;
/** BM25's term-frequency saturation. */
const BM25_K1 = 1.2;
/** BM25's length normalisation (0: none, 1: full). */
const BM25_B = 0.75;

/**
 * English function words (the language of the default setting): they occur in most chunks, so they
 * tell nothing about which to rank first, and matching them made every chunk a candidate.
 */
const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she ' +
    'should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves s t d ll re ve m'
  ).split(' '),
);

/** Lower-cased words of a text, accents kept off as FTS5's `remove_diacritics` does. */
export function words(text: string): string[] {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? [];
}

/** A text's index terms in a language: its words, stemmed (language.ts). */
export function indexTerms(language: string): (text: string) => string[] {
  const stem = stemmerOf(language);
  return (text) => words(text).map(stem);
}

/**
 * The distinct terms of a query that are worth looking for, at most 32 (a query is a question, not a
 * document): stop words are dropped, so a query of stop words only looks for nothing. Each word is
 * stemmed in every language the searched chunks are indexed in (usually one), so it finds them all.
 */
export function queryTerms(
  query: string,
  languages: readonly string[] = ['none'],
  stopWords: ReadonlySet<string> = ENGLISH_STOP_WORDS,
): string[] {
  const stems = languages.map(stemmerOf);
  const out = new Set<string>();
  for (const w of words(query)) {
    if (stopWords.has(w)) continue;
    for (const stem of stems) out.add(stem(w));
    if (out.size >= MAX_QUERY_TERMS) break;
  }
  return [...out].slice(0, MAX_QUERY_TERMS);
}

/** BM25's idf of a term in `df` of `n` chunks (never negative). */
export function idf(df: number, n: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/** A candidate reduced to what BM25 reads: the query terms' counts in it and its length in words. */
export interface Tokenized {
  id: string;
  counts: Map<string, number>;
  length: number;
}

/** `tokenize`'s work for one candidate; done once per candidate, however often the ranking runs. */
export function tokenize(wanted: ReadonlySet<string>, candidate: { id: string; terms: string }): Tokenized {
  // Only the query's words are counted; the length needs no map. A scan of the string, not a split:
  // thousands of candidates of ~100 words each are read per query.
  // Segments as `split(' ')` gives them (an empty text has none).
  const counts = new Map<string, number>();
  const text = candidate.terms;
  let length = 0;
  for (let start = 0; text !== '' && start <= text.length; length++) {
    let end = text.indexOf(' ', start);
    if (end < 0) end = text.length;
    const w = text.slice(start, end);
    if (wanted.has(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
    start = end + 1;
  }
  return { id: candidate.id, counts, length };
}

/**
 * BM25 of each candidate, from its stored words (`terms`, space-separated: tokenised once, at
 * indexing). `totalChunks` is the corpus size and `df` each term's document frequency in it (counted by
 * the index); a term without a count is counted over the candidates. `averageLength` is the corpus's
 * mean chunk length in words (the candidates' when absent).
 */
export function bm25(
  terms: string[],
  candidates: Array<{ id: string; terms: string }>,
  totalChunks: number,
  df: ReadonlyMap<string, number> = new Map(),
  averageLength?: number,
): Array<{ chunkId: string; score: number }> {
  const wanted = new Set(terms);
  return bm25Tokenized(
    terms,
    candidates.map((c) => tokenize(wanted, c)),
    totalChunks,
    df,
    averageLength,
  );
}

/** `bm25` of candidates already tokenized for these terms. */
export function bm25Tokenized(
  terms: string[],
  tokenized: readonly Tokenized[],
  totalChunks: number,
  df: ReadonlyMap<string, number> = new Map(),
  averageLength?: number,
): Array<{ chunkId: string; score: number }> {
  if (tokenized.length === 0) return [];
  const avg =
    averageLength && averageLength > 0
      ? averageLength
      : tokenized.reduce((n, t) => n + t.length, 0) / tokenized.length || 1;
  const n = Math.max(totalChunks, tokenized.length);
  const weights = new Map<string, number>();
  for (const term of terms) {
    let count = df.get(term);
    if (count === undefined) {
      count = 0;
      for (const t of tokenized) if (t.counts.has(term)) count++;
    }
    weights.set(term, idf(count, n));
  }
  const scored: Array<{ chunkId: string; score: number }> = [];
  for (const t of tokenized) {
    let score = 0;
    for (const term of terms) {
      const tf = t.counts.get(term) ?? 0;
      if (tf === 0) continue;
      score += bm25Weight(weights.get(term) ?? 0, tf, t.length, avg);
    }
    if (score > 0) scored.push({ chunkId: t.id, score });
  }
  // Rounded before comparing: float noise must not reorder equal scores between runs.
  return scored.sort((a, b) => Math.round((b.score - a.score) * 1e9) || (a.chunkId < b.chunkId ? -1 : 1));
}

/** One term's part of a chunk's BM25: its idf `weight`, its count `tf` in a chunk of `length` words. */
export function bm25Weight(weight: number, tf: number, length: number, average: number): number {
  return weight * ((tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / average)));
}
