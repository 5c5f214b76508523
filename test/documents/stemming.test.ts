import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryTerms } from '../../src/modules/documents/bm25.js';
import { stemmerOf, topicLanguages } from '../../src/modules/documents/language.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

describe('stemming per language', () => {
  it('stems English by default, a configured language per topic, and refuses an unknown one', () => {
    const languageOf = topicLanguages('english', 'recettes=french, raw=none');
    expect(languageOf('help')).toBe('english');
    expect(languageOf('recettes')).toBe('french');
    expect(stemmerOf(languageOf('help'))('shipping')).toBe(stemmerOf('english')('ships'));
    expect(stemmerOf(languageOf('raw'))('shipping')).toBe('shipping');
    expect(stemmerOf('french')('livraisons')).toBe(stemmerOf('french')('livraison'));
    expect(() => topicLanguages('klingon', '')).toThrow(/KNOWLEDGE_LANGUAGE: unknown language 'klingon'/);
    expect(() => topicLanguages('english', 'a=elvish')).toThrow(/KNOWLEDGE_TOPIC_LANGUAGES/);
    expect(() => topicLanguages('english', 'nolanguage')).toThrow(/not topic=language/);
  });

  it('stems a query in every language the searched chunks are in, within the term bound', () => {
    expect(queryTerms('Shipping boxes', ['english'])).toEqual(['ship', 'box']);
    expect(queryTerms('Shipping boxes', ['english', 'none'])).toEqual(['ship', 'shipping', 'box', 'boxes']);
    expect(queryTerms('the of and', ['english'])).toEqual([]);
    expect(
      queryTerms('word '.repeat(10_000) + Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '), [
        'english',
      ]),
    ).toHaveLength(32);
  });
});

describe.each(await testDialects())('keyword search finds inflected words, on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { KNOWLEDGE_TOPIC_LANGUAGES: 'fr=french,raw=none' } });
    const docs = [
      { content: 'Every parcel ships the same day from our workshop.', topic: 'en' },
      { content: 'Les livraisons partent le jour même de notre atelier.', topic: 'fr' },
      { content: 'Every parcel ships the same day from our workshop.', topic: 'raw' },
    ];
    for (const body of docs) {
      const doc = await loaded(p, { source: 'text', ...body });
      await processed(p, doc.documentId, { operations: ['chunk', 'index'] });
    }
  }, 60_000);
  afterAll(() => p?.close());

  const texts = async (body: Record<string, unknown>) => {
    const res = await query(p, { mode: 'keyword', topK: 5, ...body });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { results: Array<{ text: string; topic: string }> }).results.map((r) => r.topic);
  };

  it('matches "shipping" to "ships" in an English topic, and "livraison" to "livraisons" in a French one', async () => {
    expect(await texts({ query: 'shipping', topics: ['en'] })).toEqual(['en']);
    expect(await texts({ query: 'livraison', topics: ['fr'] })).toEqual(['fr']);
    // A topic indexed without stemming finds words only as written.
    expect(await texts({ query: 'shipping', topics: ['raw'] })).toEqual([]);
    expect(await texts({ query: 'ships', topics: ['raw'] })).toEqual(['raw']);
    // Across topics of several languages, the query is stemmed in each.
    expect((await texts({ query: 'ships livraison' })).sort()).toEqual(['en', 'fr', 'raw']);
  });

  it('keeps bad input cheap: a 10,000-word query, stop words only, an empty topic, topK bounds', async () => {
    const started = performance.now();
    const long = await query(p, { query: 'parcel '.repeat(10_000), mode: 'hybrid', topK: 5 });
    expect([200, 400]).toContain(long.statusCode);
    expect(await texts({ query: 'the of and to' })).toEqual([]);
    expect(await texts({ query: 'shipping', topics: ['nothing-here'] })).toEqual([]);
    for (const topK of [0, 10_000]) expect((await query(p, { query: 'parcel', topK })).statusCode).toBe(400);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
