import type { JsonText, Timestamp } from '../../core/db/types.js';

export interface DocumentsTable {
  id: string;
  account_id: string;
  topic: string;
  source: string;
  url: string | null;
  title: string | null;
  mime_type: string;
  content_hash: string;
  char_count: number;
  page_count: number;
  metadata: JsonText;
  /** loaded → chunked → embedded → indexed, or failed (with `error`). */
  status: string;
  error: string | null;
  chunk_count: number;
  embedding_model: string | null;
  /** The language its chunks' terms are stemmed in (language.ts); `none` before stemming existed. */
  language: string;
  /** JSON of the queued or running processing job, until it ends (crash recovery). */
  processing: JsonText | null;
  /**
   * Set when it is indexed, above every revision of its topic (0 before): what tells the knowledge
   * cache its chunks changed (migration 605).
   */
  revision: number;
  /**
   * References other modules placed on it (a Flowise store's loaders; 0 for none), -1 once it is being
   * deleted: the last release deletes it, and an upload of its content does not take it then (606).
   */
  holds: number;
  /** When `holds` last changed (null: not since migration 607); a background pass reads it. */
  held_at: string | null;
  /** 1 when an upload that holds what it loads made it, 0 when the documents API did (607). */
  made_held: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DocumentPagesTable {
  document_id: string;
  page_number: number;
  text: string;
}

export interface ChunksTable {
  id: string;
  document_id: string;
  account_id: string;
  topic: string;
  chunk_index: number;
  page_number: number;
  start_offset: number;
  end_offset: number;
  text: string;
  /** The chunk's words, stemmed in its document's language, space-separated (both full-text indexes read this). */
  terms: string;
  /** The model of the chunk's vector (in `chunk_vectors`); null until embedded. */
  embedding_model: string | null;
}

/** A chunk's embedding: float32 little-endian, unit length. */
export interface ChunkVectorsTable {
  chunk_id: string;
  document_id: string;
  embedding: Buffer;
}

declare module '../../core/db/types.js' {
  interface Database {
    documents: DocumentsTable;
    document_pages: DocumentPagesTable;
    chunks: ChunksTable;
    chunk_vectors: ChunkVectorsTable;
  }
}
