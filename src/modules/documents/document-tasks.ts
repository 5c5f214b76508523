/**
 * The documents module's CPU work as CPU-pool tasks (src/core/cpu): chunking a document and tokenising
 * its chunks for the full-text index, and normalising a large text. A 20 MB document costs a worker
 * about a second; on the event loop it would hold every other request that long.
 */
import { indexTerms } from './bm25.js';
import { type ChunkOptions, splitPages } from './chunker.js';
import { textDocument } from './loaders/text.js';
import type { LoadedDocument, LoadedPage } from './types.js';

/**
 * A document's chunks, packed: `bounds` holds (page index, start, end) per chunk, into the pages the
 * caller sent (it slices the text itself), and `terms` the chunks' index words, chunk after chunk,
 * `termEnds[i]` being where chunk i's end. Two strings and two arrays cross the thread, not 40,000 objects.
 */
export interface PackedChunks {
  bounds: Int32Array;
  terms: string;
  termEnds: Int32Array;
}

export function chunkDocument(input: {
  pages: LoadedPage[];
  options: ChunkOptions;
  /** The language its terms are stemmed in (language.ts). */
  language: string;
}): PackedChunks {
  const { pages, options } = input;
  const terms = indexTerms(input.language);
  const pageIndex = new Map(pages.map((p, i) => [p.pageNumber, i]));
  const chunks = splitPages(pages, options);
  const bounds = new Int32Array(chunks.length * 3);
  const termEnds = new Int32Array(chunks.length);
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    bounds[i * 3] = pageIndex.get(c.pageNumber) ?? 0;
    bounds[i * 3 + 1] = c.startOffset;
    bounds[i * 3 + 2] = c.endOffset;
    const t = terms(c.text).join(' ');
    parts.push(t);
    length += t.length;
    termEnds[i] = length;
  }
  return { bounds, terms: parts.join(''), termEnds };
}

export function normaliseText(input: {
  text: string;
  mimeType: 'text/plain' | 'text/markdown';
}): LoadedDocument {
  return textDocument(input.text, input.mimeType);
}
