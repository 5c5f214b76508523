/**
 * Keyword ranking in process: the database finds the chunks that contain a query term (FTS5 or
 * tsvector), this ranks them with BM25, so SQLite and PostgreSQL return the same order.
 */
const WORD = /[\p{L}\p{N}]+/gu;
const MAX_QUERY_TERMS = 32;
const K1 = 1.2;
const B = 0.75;

/** Lower-cased words of a text, accents kept off as FTS5's `remove_diacritics` does. */
export function words(text: string): string[] {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? [];
}

/** The distinct terms of a query, at most 32 (a query is a question, not a document). */
export function queryTerms(query: string): string[] {
  return [...new Set(words(query))].slice(0, MAX_QUERY_TERMS);
}

/**
 * BM25 of each candidate, from its stored words (`terms`, space-separated: tokenised once, at
 * indexing). `totalChunks` is the corpus size; document frequencies are counted over the candidates
 * (exact when the candidate cap was not reached).
 */
export function bm25(
  terms: string[],
  candidates: Array<{ id: string; terms: string }>,
  totalChunks: number,
): Array<{ chunkId: string; score: number }> {
  if (candidates.length === 0) return [];
  const wanted = new Set(terms);
  const tokenized = candidates.map((c) => {
    // Only the query's words are counted; the length needs no map.
    const counts = new Map<string, number>();
    const list = c.terms === '' ? [] : c.terms.split(' ');
    for (const w of list) if (wanted.has(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
    return { id: c.id, counts, length: list.length };
  });
  const avg = tokenized.reduce((n, t) => n + t.length, 0) / tokenized.length || 1;
  const n = Math.max(totalChunks, candidates.length);
  const idf = new Map<string, number>();
  for (const term of terms) {
    let df = 0;
    for (const t of tokenized) if (t.counts.has(term)) df++;
    idf.set(term, Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  }
  const scored = tokenized.map((t) => {
    let score = 0;
    for (const term of terms) {
      const tf = t.counts.get(term) ?? 0;
      if (tf === 0) continue;
      score += (idf.get(term) ?? 0) * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * t.length) / avg)));
    }
    return { chunkId: t.id, score };
  });
  // Rounded before comparing: float noise must not reorder equal scores between runs.
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => Math.round((b.score - a.score) * 1e9) || (a.chunkId < b.chunkId ? -1 : 1));
}
