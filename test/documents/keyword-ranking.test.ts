import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bm25, queryTerms, words } from '../../src/modules/documents/bm25.js';
import { KnowledgeService } from '../../src/modules/documents/knowledge-service.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

/** Filler documents that all say "system", then late ones that also say something rare. */
const FILLER = (i: number) =>
  `Note ${i}. The system keeps a journal of every change. The system replays the journal after a restart, ` +
  `and the system answers reads from memory while it does.`;
const LATE = [
  'The myocardial perfusion report is stored by the system beside the patient record.',
  'Myocardial scans are archived nightly.',
];

describe.each(await testDialects())('keyword search ranks every match, then cuts, on %s', (dialect) => {
  let p: TestPlatform;
  let texts: Map<string, string>;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    for (let i = 0; i < 30; i++) {
      const doc = await loaded(p, { source: 'text', content: FILLER(i), topic: 'kb' });
      await processed(p, doc.documentId, { operations: ['chunk', 'index'] });
    }
    for (const content of LATE) {
      const doc = await loaded(p, { source: 'text', content, topic: 'kb' });
      await processed(p, doc.documentId, { operations: ['chunk', 'index'] });
    }
    const rows = await p.ctx.db.selectFrom('chunks').select(['id', 'terms']).execute();
    texts = new Map(rows.map((r) => [r.id, r.terms]));
  }, 60_000);
  afterAll(() => p?.close());

  /** A second service on the platform's own database (its own in-process index, loaded from the rows). */
  const tight = () =>
    new KnowledgeService(
      new DocumentStore(p.ctx.db, p.dialect),
      async () => ({ vectors: [], model: 'none' }),
      'none',
    );

  it('finds a document ingested last among many that share a frequent word, and ranks it first', async () => {
    const { results } = await tight().query(p.accountId, {
      query: 'system myocardial',
      topK: 5,
      mode: 'keyword',
    });
    expect(
      results
        .slice(0, 2)
        .map((r) => r.text)
        .sort(),
    ).toEqual([...LATE].sort());
  });

  it('matches a full BM25 over every chunk, score for score', async () => {
    const { results } = await tight().query(p.accountId, {
      query: 'myocardial scans',
      topK: 5,
      mode: 'keyword',
    });
    const all = [...texts].map(([id, terms]) => ({ id, terms }));
    // Stemmed as the chunks were indexed (the default language, English): "scans" is the term "scan".
    const terms = queryTerms('myocardial scans', ['english']);
    expect(terms).toContain('scan');
    const df = new Map(terms.map((t) => [t, all.filter((c) => c.terms.split(' ').includes(t)).length]));
    const matching = all.filter((c) => terms.some((t) => c.terms.split(' ').includes(t)));
    // The corpus's mean length in words (BM25's avgdl), not the matches'.
    const average = all.reduce((n, c) => n + c.terms.split(' ').length, 0) / all.length;
    // Terms summed rarest first, as the index sums them (float addition is not associative).
    const ordered = [...terms].sort((a, b) => df.get(a)! - df.get(b)!);
    const expected = bm25(ordered, matching, all.length, df, average);
    expect(results.map((r) => r.score)).toEqual(expected.slice(0, 5).map((r) => r.score));
    expect(results.map((r) => r.chunkId)).toEqual(expected.slice(0, 5).map((r) => r.chunkId));
  });

  it('drops stop words: a query of stop words only finds nothing, fast', async () => {
    expect(queryTerms('what is the of and to')).toEqual([]);
    expect(words('The Café')).toEqual(['the', 'cafe']);
    const started = performance.now();
    const res = await query(p, { query: 'the of and to is it', mode: 'keyword', topK: 5 });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('takes topK up to 200 and refuses 0, 201 and a query of 10,000 words with a 400', async () => {
    const many = await query(p, { query: 'system journal', mode: 'keyword', topK: 200 });
    expect(many.statusCode).toBe(200);
    expect(many.json().results.length).toBe(31);
    for (const topK of [0, 201, 10_000]) {
      const res = await query(p, { query: 'system', topK });
      expect(res.statusCode, `topK ${topK}`).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const long = await query(p, { query: 'word '.repeat(10_000) });
    expect(long.statusCode).toBe(400);
  });

  it('answers a topic with no documents with no results', async () => {
    const res = await query(p, { query: 'myocardial', topics: ['empty-topic'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([]);
  });

  it('weights of the fusion can be set per query; bad weights are a 400', async () => {
    const keywordOnly = await query(p, {
      query: 'myocardial scans',
      topK: 3,
      weights: { keyword: 1, vector: 0 },
    });
    expect(keywordOnly.statusCode).toBe(200);
    const keyword = await query(p, { query: 'myocardial scans', topK: 3, mode: 'keyword' });
    expect(keywordOnly.json().results.map((r: { chunkId: string }) => r.chunkId)).toEqual(
      keyword.json().results.map((r: { chunkId: string }) => r.chunkId),
    );
    const bad = await query(p, { query: 'myocardial', weights: { keyword: -1 } });
    expect(bad.statusCode).toBe(400);
  });
});
