import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../types.js';
import { UpstreamError } from '../types.js';
import {
  cosine,
  embedHashedNgrams,
  HASHED_NGRAMS_DIMENSIONS,
  HASHED_NGRAMS_MAX_CHARS,
  wordTokens,
} from './hashed-ngrams.js';
import { BuiltinProvider } from './index.js';

const norm = (v: Float32Array): number => Math.hypot(...v);
const signal = new AbortController().signal;

function entry(upstreamModel: string): ModelEntry {
  return {
    name: `builtin/${upstreamModel}`,
    provider: 'builtin',
    upstreamModel,
    kind: 'embedding',
    contextWindow: 8192,
    fallbacks: [],
    timeoutMs: 30_000,
  };
}

describe('hashed n-gram embedder', () => {
  it('is deterministic and stable across releases (stored vectors depend on it)', () => {
    const a = embedHashedNgrams('The quick brown fox jumps over the lazy dog.');
    const b = embedHashedNgrams('The quick brown fox jumps over the lazy dog.');
    expect(a).toHaveLength(HASHED_NGRAMS_DIMENSIONS);
    expect(Array.from(a)).toEqual(Array.from(b));
    // Pinned: a change of tokenizer, hash or weights changes these and must come with a re-embedding.
    const hello = embedHashedNgrams('hello world');
    const nonZero = Array.from(hello.entries()).filter(([, x]) => x !== 0);
    expect(nonZero.length).toBeGreaterThan(5);
    expect(nonZero.slice(0, 3).map(([i, x]) => [i, Number(x.toFixed(4))])).toEqual([
      [5, 0.1662],
      [16, -0.1662],
      [66, -0.3323],
    ]);
  });

  it('is L2-normalised', () => {
    for (const text of ['a', 'hello world', 'x '.repeat(5000), 'Ünïcödé façade naïve']) {
      expect(norm(embedHashedNgrams(text))).toBeCloseTo(1, 5);
    }
  });

  it('puts texts about the same thing closer than unrelated ones', () => {
    const cat = embedHashedNgrams('The cat sat on the mat in the kitchen.');
    const cats = embedHashedNgrams('Cats sitting on mats in kitchens.');
    const finance = embedHashedNgrams('Quarterly revenue grew by ten percent year over year.');
    // Only inflections are shared (cat/cats, mat/mats…): their character grams carry it; the function
    // words both have ("on", "in", "the") weigh little on purpose.
    expect(cosine(cat, cats)).toBeGreaterThan(cosine(cat, finance) + 0.1);
    expect(cosine(cat, cat)).toBeCloseTo(1, 5);
  });

  it('reads Unicode: NFKC, case folding, non-Latin scripts', () => {
    const same = (a: string, b: string): number => cosine(embedHashedNgrams(a), embedHashedNgrams(b));
    expect(same('ｆｕｌｌｗｉｄｔｈ ＴＥＸＴ', 'fullwidth text')).toBeCloseTo(1, 5);
    expect(same('Cafe\u0301 crème', 'Café CRÈME')).toBeCloseTo(1, 5);
    expect(same('ΣΟΦΙΑ', 'σοφια')).toBeCloseTo(1, 5);
    expect(wordTokens('東京タワー と Москва!')).toEqual(['東京タワー', 'と', 'москва']);
    const tokyo = embedHashedNgrams('東京タワーは東京にあります');
    expect(norm(tokyo)).toBeCloseTo(1, 5);
    expect(cosine(tokyo, embedHashedNgrams('東京タワーの高さ'))).toBeGreaterThan(
      cosine(tokyo, embedHashedNgrams('Москва столица России')),
    );
  });

  it('gives the zero vector, not NaN, to a text without words', () => {
    for (const text of ['', '   ', '?!… — ...']) {
      const v = embedHashedNgrams(text);
      expect(v.every((x) => x === 0)).toBe(true);
      expect(cosine(v, embedHashedNgrams('anything'))).toBe(0);
    }
  });

  it(`reads only the first ${HASHED_NGRAMS_MAX_CHARS} characters of a very long text`, () => {
    const long = 'lorem ipsum dolor sit amet consectetur '.repeat(30_000); // 1.2 M characters
    // Equal to the embedding of its first 100k characters: the rest is never read (time is bounded).
    const v = embedHashedNgrams(long);
    expect(Array.from(v)).toEqual(Array.from(embedHashedNgrams(long.slice(0, HASHED_NGRAMS_MAX_CHARS))));
    expect(Array.from(v)).not.toEqual(Array.from(embedHashedNgrams(`${long.slice(0, 50_000)} extra words`)));
  });
});

describe('BuiltinProvider embeddings', () => {
  const provider = new BuiltinProvider();

  it('embeds a batch with hashed-ngrams and leaves the token count to the gateway', async () => {
    const result = await provider.embed(
      { model: 'hashed-ngrams', input: ['first text', 'second text here'] },
      entry('hashed-ngrams'),
      signal,
    );
    expect(result.embeddings).toHaveLength(2);
    expect(result.embeddings[0]).toHaveLength(384);
    expect(result.embeddings[0]).toEqual(Array.from(embedHashedNgrams('first text')));
    expect(result.promptTokens).toBeNull();
  });

  it('a large batch yields to the event loop between slices (a 20 MB request must not freeze the server)', async () => {
    let ticked = false;
    setImmediate(() => {
      ticked = true;
    });
    const result = await provider.embed(
      { model: 'hashed-ngrams', input: Array.from({ length: 200 }, (_, i) => `text number ${i}`) },
      entry('hashed-ngrams'),
      signal,
    );
    expect(result.embeddings).toHaveLength(200);
    expect(result.embeddings[199]).toEqual(Array.from(embedHashedNgrams('text number 199')));
    expect(ticked).toBe(true);
  });

  it('refuses other dimensions, chat on an embedder, and unknown models', async () => {
    const dims = provider.embed(
      { model: 'hashed-ngrams', input: ['x'], dimensions: 1024 },
      entry('hashed-ngrams'),
      signal,
    );
    await expect(dims).rejects.toMatchObject({ name: 'UpstreamError', retryable: false, status: 400 });
    // Fewer dimensions are the first ones, renormalised (as OpenAI's `dimensions`).
    const short = await provider.embed(
      { model: 'hashed-ngrams', input: ['some words'], dimensions: 256 },
      entry('hashed-ngrams'),
      signal,
    );
    expect(short.embeddings[0]).toHaveLength(256);
    expect(Math.hypot(...(short.embeddings[0] as number[]))).toBeCloseTo(1, 5);
    const chat = provider.chat(
      { model: 'hashed-ngrams', messages: [{ role: 'user', content: 'hi' }], options: {} },
      entry('hashed-ngrams'),
      signal,
    );
    await expect(chat).rejects.toBeInstanceOf(UpstreamError);
    await expect(chat).rejects.toMatchObject({ retryable: false, status: 400 });
    const unknown = provider.embed({ model: 'nope', input: ['x'] }, entry('nope'), signal);
    await expect(unknown).rejects.toMatchObject({ retryable: false, status: 404 });
  });

  it('rejects an aborted request', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      provider.embed({ model: 'hashed-ngrams', input: ['x'] }, entry('hashed-ngrams'), controller.signal),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('hashed-ngrams term weights', () => {
  it('lets function words weigh little: texts that share only them are far apart, content words bring them close', () => {
    const a = embedHashedNgrams('what is the price of the candle');
    const b = embedHashedNgrams('what is the name of the river');
    const c = embedHashedNgrams('candle price list');
    expect(cosine(a, b)).toBeLessThan(0.2);
    expect(cosine(a, c)).toBeGreaterThan(cosine(a, b) + 0.3);
  });
});
