/**
 * Recursive character splitter (the semantics of LangChain's RecursiveCharacterTextSplitter, our own code).
 *
 * A page's text is cut on the first separator level that occurs in it — paragraphs, lines, sentence ends,
 * spaces — and any piece still longer than `chunkSize` is cut again with the next levels, down to single
 * characters (never inside a surrogate pair). Neighbouring small pieces are merged back up to `chunkSize`
 * (measured on the trimmed text a chunk will hold), and consecutive chunks of one merge share up to
 * `chunkOverlap` characters made of whole pieces from the end of the previous chunk.
 *
 * Everything works on offsets into the page text, never on copied strings, so the cost is linear in the text
 * (times the number of levels) and every chunk is exactly `page.text.slice(startOffset, endOffset)`.
 */
import type { LoadedPage, TextChunk } from './types.js';

export interface ChunkOptions {
  /** Largest chunk, in UTF-16 code units (JavaScript string length). */
  chunkSize: number;
  /** Most characters two consecutive chunks may share; less than `chunkSize`. */
  chunkOverlap: number;
}

/** Where a level cuts: the separator starts the next piece, except sentence ends, which close a sentence. */
type Level = (text: string) => number[];

const cutsBefore =
  (separator: string): Level =>
  (text) => {
    const cuts: number[] = [];
    for (let at = text.indexOf(separator); at !== -1; at = text.indexOf(separator, at + separator.length)) {
      cuts.push(at);
    }
    return cuts;
  };

const SENTENCE_END = /[.!?] /g;
const cutsAfterSentenceEnds: Level = (text) => {
  const cuts: number[] = [];
  for (const match of text.matchAll(SENTENCE_END)) cuts.push(match.index + 1);
  return cuts;
};

/** Tried in order; the character level after them is handled by `splitCharacters`. */
const LEVELS: readonly Level[] = [
  cutsBefore('\n\n'),
  cutsBefore('\n'),
  cutsAfterSentenceEnds,
  cutsBefore(' '),
];

/** The same set as `String.prototype.trim` and the regex `\s`. */
const isWhitespace = (code: number): boolean =>
  code === 0x20 ||
  (code >= 0x09 && code <= 0x0d) ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000 ||
  code === 0xfeff;

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** First index in the sorted `cuts` whose value is greater than `after`. */
function firstCutAfter(cuts: number[], after: number): number {
  let low = 0;
  let high = cuts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cuts[middle]! <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Splits one page; emits trimmed, non-empty chunks in text order. */
class PageSplitter {
  /** Cut positions per level, computed once per page on first use. */
  private readonly cuts: (number[] | undefined)[] = [];
  /** End of the last emitted chunk, to drop chunks that add nothing new (whitespace-only tails). */
  private lastEnd = -1;

  constructor(
    private readonly text: string,
    private readonly size: number,
    private readonly overlap: number,
    private readonly emit: (start: number, end: number) => void,
  ) {}

  run(): void {
    this.split(0, this.text.length, 0);
  }

  private cutsOf(level: number): number[] {
    let cuts = this.cuts[level];
    if (cuts === undefined) {
      cuts = LEVELS[level]!(this.text);
      this.cuts[level] = cuts;
    }
    return cuts;
  }

  /** Splits [start, end) with the first level from `level` on that cuts inside it. */
  private split(start: number, end: number, level: number): void {
    [start, end] = this.trim(start, end);
    if (end - start <= this.size) {
      this.push(start, end);
      return;
    }
    for (; level < LEVELS.length; level++) {
      const cuts = this.cutsOf(level);
      let next = firstCutAfter(cuts, start);
      if (next >= cuts.length || cuts[next]! >= end) continue;
      // Pieces [from, to) between consecutive cuts; runs of small pieces are merged, big ones split deeper.
      // A piece is measured without its surrounding whitespace, as that is what a chunk of it would hold.
      const group: number[] = [start];
      let from = start;
      for (;;) {
        const to = next < cuts.length && cuts[next]! < end ? cuts[next++]! : end;
        const [pieceStart, pieceEnd] = this.trim(from, to);
        if (pieceEnd - pieceStart <= this.size) {
          group.push(to);
        } else {
          this.merge(group);
          this.split(pieceStart, pieceEnd, level + 1);
          group.length = 0;
          group.push(to);
        }
        from = to;
        if (to === end) break;
      }
      this.merge(group);
      return;
    }
    this.splitCharacters(start, end);
  }

  /**
   * Merges contiguous pieces (given by their boundaries, each piece fitting once trimmed) into chunks whose
   * trimmed text fits `size`; after each chunk, the next one starts with the earliest of its pieces that
   * keeps the shared text within `overlap`.
   */
  private merge(bounds: number[]): void {
    if (bounds.length < 2) return;
    const text = this.text;
    let first = 0;
    // First non-whitespace position at or after bounds[first], found so far: it only moves forward.
    let lead = bounds[0]!;
    const leadUpTo = (limit: number): number => {
      if (lead < bounds[first]!) lead = bounds[first]!;
      while (lead < limit && isWhitespace(text.charCodeAt(lead))) lead++;
      return lead;
    };
    for (let last = 1; last < bounds.length; last++) {
      const pieceStart = bounds[last - 1]!;
      let end = bounds[last]!;
      while (end > pieceStart && isWhitespace(text.charCodeAt(end - 1))) end--;
      // Whitespace alone never makes the trimmed chunk longer.
      if (end === pieceStart) continue;
      if (end - leadUpTo(end) <= this.size) continue;
      const previousEnd = this.push(bounds[first]!, pieceStart);
      while (
        first < last - 1 &&
        (previousEnd - leadUpTo(end) > this.overlap || end - leadUpTo(end) > this.size)
      ) {
        first++;
      }
    }
    this.push(bounds[first]!, bounds[bounds.length - 1]!);
  }

  /** The last level: windows of `size` characters stepping by `size - overlap`, never inside a surrogate pair. */
  private splitCharacters(start: number, end: number): void {
    const text = this.text;
    let from = start;
    for (;;) {
      let to = Math.min(from + this.size, end);
      if (to < end && isLowSurrogate(text.charCodeAt(to)) && isHighSurrogate(text.charCodeAt(to - 1))) {
        // Keep the pair whole; a one-unit chunk size cannot, so the pair goes alone and over size.
        to = to - 1 > from ? to - 1 : to + 1;
      }
      this.push(from, to);
      if (to >= end) return;
      let next = Math.max(to - this.overlap, from + 1);
      if (isLowSurrogate(text.charCodeAt(next)) && isHighSurrogate(text.charCodeAt(next - 1))) next++;
      from = next;
    }
  }

  /** [start, end) without its leading and trailing whitespace. */
  private trim(start: number, end: number): [number, number] {
    const text = this.text;
    while (start < end && isWhitespace(text.charCodeAt(start))) start++;
    while (end > start && isWhitespace(text.charCodeAt(end - 1))) end--;
    return [start, end];
  }

  /** Emits [start, end) trimmed unless it adds nothing new; returns the trimmed end (-1 when empty). */
  private push(start: number, end: number): number {
    [start, end] = this.trim(start, end);
    if (start === end) return -1;
    if (end > this.lastEnd) {
      this.lastEnd = end;
      this.emit(start, end);
    }
    return end;
  }
}

/** Splits every page into chunks; `index` runs over the whole document, chunks never span pages. */
export function splitPages(pages: LoadedPage[], options: ChunkOptions): TextChunk[] {
  const { chunkSize, chunkOverlap } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new RangeError(`chunkSize must be a whole number of at least 1, not ${chunkSize}`);
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new RangeError(
      `chunkOverlap must be a whole number from 0 to below chunkSize (${chunkSize}), not ${chunkOverlap}`,
    );
  }
  const chunks: TextChunk[] = [];
  for (const page of pages) {
    const { text, pageNumber } = page;
    const emit = (startOffset: number, endOffset: number): void => {
      chunks.push({
        index: chunks.length,
        pageNumber,
        startOffset,
        endOffset,
        text: text.slice(startOffset, endOffset),
      });
    };
    new PageSplitter(text, chunkSize, chunkOverlap, emit).run();
  }
  return chunks;
}
