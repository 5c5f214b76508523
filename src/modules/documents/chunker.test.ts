import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitPages } from './chunker.js';
import type { LoadedPage, TextChunk } from './types.js';

const page = (text: string, pageNumber = 1): LoadedPage => ({ pageNumber, text });
const texts = (chunks: TextChunk[]) => chunks.map((c) => c.text);
const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
/** A boundary inside a surrogate pair would cut a character in two. */
const splitsPair = (text: string, at: number) =>
  at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at));

/** Every invariant the brief asks for, checked against the pages the chunks came from. */
function checkChunks(pages: LoadedPage[], chunks: TextChunk[], chunkSize: number, chunkOverlap: number) {
  expect(chunks.map((chunk) => chunk.index)).toEqual(chunks.map((_, i) => i));
  let at = 0;
  for (const { pageNumber, text } of pages) {
    const own: TextChunk[] = [];
    while (at < chunks.length && chunks[at]!.pageNumber === pageNumber) own.push(chunks[at++]!);
    let covered = 0;
    let previous: TextChunk | undefined;
    for (const chunk of own) {
      expect(chunk.text).toBe(text.slice(chunk.startOffset, chunk.endOffset));
      expect(chunk.text.trim()).toBe(chunk.text);
      expect(chunk.text.length).toBeGreaterThan(0);
      // Only a lone astral character may exceed a one-unit chunk size.
      if (chunk.text.length > chunkSize) expect([...chunk.text]).toHaveLength(1);
      expect(splitsPair(text, chunk.startOffset) || splitsPair(text, chunk.endOffset)).toBe(false);
      if (previous) {
        expect(chunk.startOffset).toBeGreaterThanOrEqual(previous.startOffset);
        expect(chunk.startOffset).toBeGreaterThanOrEqual(previous.endOffset - chunkOverlap);
        expect(chunk.endOffset).toBeGreaterThan(previous.endOffset);
      }
      // Whatever lies between the covered part and this chunk is whitespace.
      if (chunk.startOffset > covered) expect(text.slice(covered, chunk.startOffset).trim()).toBe('');
      covered = Math.max(covered, chunk.endOffset);
      previous = chunk;
    }
    expect(text.slice(covered).trim()).toBe('');
  }
  // Every chunk belongs to a page, in page order.
  expect(at).toBe(chunks.length);
}

const word = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
  minLength: 1,
  maxLength: 12,
});
const unicodeWord = fc.string({ unit: 'binary', minLength: 1, maxLength: 6 });
const astral = fc.constantFrom('😀', '𝄞', '👍🏽', '𠜎', 'é', '中文');
const separator = fc.constantFrom(
  ' ',
  ' ',
  ' ',
  '\n',
  '\n\n',
  '. ',
  '! ',
  '? ',
  '.',
  '  ',
  '\t',
  '\r\n',
  '\u3000',
);
const token = fc.oneof(
  { arbitrary: word, weight: 6 },
  { arbitrary: separator, weight: 5 },
  { arbitrary: unicodeWord, weight: 1 },
  { arbitrary: astral, weight: 1 },
);
const text = fc.array(token, { maxLength: 200 }).map((parts) => parts.join(''));
const sizes = fc
  .integer({ min: 1, max: 80 })
  .chain((chunkSize) =>
    fc.record({ chunkSize: fc.constant(chunkSize), chunkOverlap: fc.nat(chunkSize - 1) }),
  );

describe('splitPages properties', () => {
  it('covers each page in order, within size and overlap, with exact offsets', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 3 }), sizes, (bodies, options) => {
        const pages = bodies.map((body, i) => page(body, i + 1));
        const chunks = splitPages(pages, options);
        checkChunks(pages, chunks, options.chunkSize, options.chunkOverlap);
      }),
      { numRuns: 600 },
    );
  });

  it('holds for arbitrary unicode text too', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), sizes, (body, options) => {
        const pages = [page(body)];
        checkChunks(pages, splitPages(pages, options), options.chunkSize, options.chunkOverlap);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps text that fits in one chunk whole', () => {
    fc.assert(
      fc.property(text, (body) => {
        const chunks = splitPages([page(body)], { chunkSize: Math.max(body.length, 1), chunkOverlap: 0 });
        const trimmed = body.trim();
        expect(texts(chunks)).toEqual(trimmed === '' ? [] : [trimmed]);
      }),
    );
  });
});

describe('splitPages examples', () => {
  it('prefers paragraph boundaries over cutting mid-sentence', () => {
    const first = 'The first paragraph talks about tea. It has two sentences.';
    const second = 'The second one is about coffee. It is short.';
    const body = `${first}\n\n${second}`;
    const chunks = splitPages([page(body)], { chunkSize: 70, chunkOverlap: 10 });
    expect(texts(chunks)).toEqual([first, second]);
    expect(chunks[1]).toMatchObject({ startOffset: first.length + 2, endOffset: body.length });
  });

  it('falls back to lines, then sentences keeping their punctuation', () => {
    const body = 'Line one is here.\nIs this line two? Yes it is! And more.';
    expect(texts(splitPages([page(body)], { chunkSize: 20, chunkOverlap: 0 }))).toEqual([
      'Line one is here.',
      'Is this line two?',
      'Yes it is! And more.',
    ]);
  });

  it('merges small pieces up to the size (not counting trimmed whitespace) and overlaps by whole pieces', () => {
    expect(texts(splitPages([page('a b c d e f')], { chunkSize: 5, chunkOverlap: 2 }))).toEqual([
      'a b c',
      'c d e',
      'e f',
    ]);
    expect(texts(splitPages([page('a b c d e f')], { chunkSize: 5, chunkOverlap: 0 }))).toEqual([
      'a b c',
      'd e f',
    ]);
  });

  it('cuts words longer than the size into overlapping windows', () => {
    const chunks = splitPages([page('abcdefghij')], { chunkSize: 4, chunkOverlap: 1 });
    expect(texts(chunks)).toEqual(['abcd', 'defg', 'ghij']);
    expect(chunks.map((c) => [c.startOffset, c.endOffset])).toEqual([
      [0, 4],
      [3, 7],
      [6, 10],
    ]);
  });

  it('never cuts a surrogate pair', () => {
    const body = '😀😀😀';
    expect(texts(splitPages([page(body)], { chunkSize: 3, chunkOverlap: 0 }))).toEqual(['😀', '😀', '😀']);
    expect(texts(splitPages([page(body)], { chunkSize: 1, chunkOverlap: 0 }))).toEqual(['😀', '😀', '😀']);
    expect(texts(splitPages([page('a😀b')], { chunkSize: 2, chunkOverlap: 1 }))).toEqual(['a', '😀', 'b']);
  });

  it('trims whitespace by moving offsets and numbers chunks across pages', () => {
    const pages = [page('  hello world  ', 1), page('\n\n   \n', 2), page('\tlast page\n', 3)];
    const chunks = splitPages(pages, { chunkSize: 100, chunkOverlap: 0 });
    expect(chunks).toEqual([
      { index: 0, pageNumber: 1, startOffset: 2, endOffset: 13, text: 'hello world' },
      { index: 1, pageNumber: 3, startOffset: 1, endOffset: 10, text: 'last page' },
    ]);
  });

  it('returns nothing for no pages or empty pages', () => {
    expect(splitPages([], { chunkSize: 10, chunkOverlap: 0 })).toEqual([]);
    expect(splitPages([page('')], { chunkSize: 10, chunkOverlap: 0 })).toEqual([]);
  });

  it('rejects sizes that cannot work', () => {
    const body = [page('text')];
    expect(() => splitPages(body, { chunkSize: 10, chunkOverlap: 10 })).toThrow(RangeError);
    expect(() => splitPages(body, { chunkSize: 10, chunkOverlap: 11 })).toThrow(RangeError);
    expect(() => splitPages(body, { chunkSize: 0, chunkOverlap: 0 })).toThrow(RangeError);
    expect(() => splitPages(body, { chunkSize: 10, chunkOverlap: -1 })).toThrow(RangeError);
    expect(() => splitPages(body, { chunkSize: 2.5, chunkOverlap: 0 })).toThrow(RangeError);
  });

  it('chunks a large text quickly and completely', () => {
    const body = 'Some words here. And a sentence!\nA line.\n\n'.repeat(50_000);
    const pages = [page(body)];
    const chunks = splitPages(pages, { chunkSize: 500, chunkOverlap: 50 });
    checkChunks(pages, chunks, 500, 50);
    expect(chunks.length).toBeGreaterThan(body.length / 500);
  });
});
