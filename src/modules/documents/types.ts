/** The document module's neutral shapes: what loaders produce and what the index stores. */

export const DOCUMENT_SOURCES = ['url', 'text', 'markdown', 'html', 'pdf', 'workspace'] as const;
export type DocumentSource = (typeof DOCUMENT_SOURCES)[number];

export interface LoadedPage {
  /** 1-based; documents without pages (text, HTML) have one page. */
  pageNumber: number;
  text: string;
}

/** A document as loaded, before it is stored. */
export interface LoadedDocument {
  title: string | null;
  mimeType: string;
  pages: LoadedPage[];
}

/** A piece of a document's text, with where it came from. */
export interface TextChunk {
  /** 0-based position of the chunk in the document. */
  index: number;
  pageNumber: number;
  /** Character offsets of the chunk in its page's text: `text === page.text.slice(start, end)`. */
  startOffset: number;
  endOffset: number;
  text: string;
}

/** One hit of a search, before it is joined with its document. */
export interface RankedChunk {
  chunkId: string;
  /** Higher is better (cosine similarity for vectors, bm25-like for keywords, RRF for hybrid). */
  score: number;
}
