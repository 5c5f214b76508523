import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bm25 } from './bm25.js';
import { KeywordIndex } from './keyword-index.js';

/** What the index must give: bm25.ts over every live chunk, corpus statistics, terms rarest first. */
function reference(chunks: Map<string, string>, terms: string[], k: number) {
  const all = [...chunks].map(([id, t]) => ({ id, terms: t }));
  const has = (c: { terms: string }, t: string) => c.terms !== '' && c.terms.split(' ').includes(t);
  const df = new Map(terms.map((t) => [t, all.filter((c) => has(c, t)).length]));
  const present = terms.filter((t) => df.get(t)! > 0).sort((a, b) => df.get(a)! - df.get(b)!);
  const words = all.reduce((n, c) => n + (c.terms === '' ? 0 : c.terms.split(' ').length), 0);
  const matching = all.filter((c) => present.some((t) => has(c, t)));
  return bm25(present, matching, all.length, df, words / all.length || 1).slice(0, k);
}

describe('KeywordIndex', () => {
  it('ranks every chunk holding a term by BM25 with the statistics of the keys searched', () => {
    const index = new KeywordIndex();
    index.add('a', [
      { id: 'c1', terms: 'ship to canada ship' },
      { id: 'c2', terms: 'refund card' },
      { id: 'c3', terms: 'ship parcel week monday warehouse' },
    ]);
    index.add('b', [{ id: 'c4', terms: 'canada' }]);
    const chunks = new Map([
      ['c1', 'ship to canada ship'],
      ['c2', 'refund card'],
      ['c3', 'ship parcel week monday warehouse'],
    ]);
    expect(index.search(['a'], ['ship', 'canada'], 10)).toEqual(reference(chunks, ['ship', 'canada'], 10));
    chunks.set('c4', 'canada');
    expect(index.search(['a', 'b'], ['ship', 'canada'], 10)).toEqual(
      reference(chunks, ['ship', 'canada'], 10),
    );
    expect(index.search(['a'], ['nothing'], 10)).toEqual([]);
    expect(index.search(['unknown'], ['ship'], 10)).toEqual([]);
    expect(index.search(['a'], ['ship'], 0)).toEqual([]);
    expect(index.search(['a'], ['ship'], 1).map((h) => h.chunkId)).toEqual(['c1']);
  });

  it('forgets removed and replaced chunks, before and after compaction', () => {
    const index = new KeywordIndex();
    const chunks = new Map<string, string>();
    const many = Array.from({ length: 1_000 }, (_, i) => ({
      id: `c${String(i).padStart(4, '0')}`,
      terms: `common w${i % 17} w${i % 5}${i % 3 === 0 ? ' rare' : ''}`,
    }));
    index.add('t', many);
    for (const c of many) chunks.set(c.id, c.terms);
    // 200 removed: below the compaction threshold (dead rows skipped).
    const gone = many.slice(0, 200).map((c) => c.id);
    expect(index.remove('t', gone)).toBe(200);
    for (const id of gone) chunks.delete(id);
    expect(index.size('t')).toBe(800);
    expect(index.search(['t'], ['rare', 'w3'], 50)).toEqual(reference(chunks, ['rare', 'w3'], 50));
    // Replacing a chunk keeps one row for its id.
    index.add('t', [{ id: 'c0500', terms: 'rare rare rare' }]);
    chunks.set('c0500', 'rare rare rare');
    expect(index.size('t')).toBe(800);
    expect(index.search(['t'], ['rare'], 3)).toEqual(reference(chunks, ['rare'], 3));
    // Past a quarter dead: the postings are rewritten.
    const more = many.slice(200, 600).map((c) => c.id);
    index.remove('t', more);
    for (const id of more) chunks.delete(id);
    expect(index.size('t')).toBe(400);
    expect(index.search(['t'], ['common', 'w2', 'rare'], 400)).toEqual(
      reference(chunks, ['common', 'w2', 'rare'], 400),
    );
    index.add('t', [{ id: 'new', terms: 'w2 rare' }]);
    chunks.set('new', 'w2 rare');
    expect(index.search(['t'], ['w2', 'rare'], 20)).toEqual(reference(chunks, ['w2', 'rare'], 20));
    expect(index.bytes()).toBeGreaterThan(0);
    // The same id twice in one batch: the last one stands.
    index.add('u', [
      { id: 'x', terms: 'alpha alpha' },
      { id: 'x', terms: 'beta' },
    ]);
    expect(index.size('u')).toBe(1);
    expect(index.search(['u'], ['alpha'], 5)).toEqual([]);
    expect(index.search(['u'], ['beta'], 5).map((h) => h.chunkId)).toEqual(['x']);
    index.drop('t');
    expect(index.has('t')).toBe(false);
  });

  it('agrees with bm25.ts on random corpora and queries', () => {
    const word = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        fc.uniqueArray(word, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (docs, terms, k, removals) => {
          const index = new KeywordIndex();
          const chunks = new Map(docs.map((d, i) => [`c${i}`, d.join(' ')]));
          index.add(
            't',
            [...chunks].map(([id, t]) => ({ id, terms: t })),
          );
          for (const r of removals) {
            const id = `c${r % docs.length}`;
            index.remove('t', [id]);
            chunks.delete(id);
          }
          if (chunks.size === 0) return;
          expect(index.search(['t'], terms, k)).toEqual(reference(chunks, terms, k));
        },
      ),
    );
  });
});
