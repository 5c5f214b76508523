import type { Principal } from '../../../core/auth/principal.js';
import { notFound, validationError } from '../../../core/errors.js';
import type { DocumentsApi, IngestInput } from '../../documents/index.js';
import type { StoredObject } from './objects.js';

/** Chunks one page of Flowise's chunk view shows. */
export const CHUNKS_PER_PAGE = 50;

/** A loader of a store: what it loaded, as the knowledge base's documents. */
export interface Loader {
  id: string;
  loaderId: string;
  loaderName: string;
  status: string;
  totalChunks: number;
  totalChars: number;
  source: string;
  documentIds: string[];
  /** The splitter's chunk size it was loaded with, for a refresh (absent: the server's). */
  chunkSize?: number;
}

/** A store's documents are the knowledge base's topic `docstore:<id>`. */
export const STORE_TOPIC_PREFIX = 'docstore:';

/**
 * The part of a store's body saying when its loaders last let go of references (and when it was
 * made): their releases run after that save, so the holds pass leaves the store alone until it has
 * settled. Other saves (a refresh's counts, a rename, a loader added) do not set it.
 */
export const referencesDropped = (objects: { now(): string }) => ({ referencesDroppedAt: objects.now() });
/** Files one upsert may load. */
export const MAX_UPSERT_FILES = 20;

export const topicOf = (storeId: string) => `${STORE_TOPIC_PREFIX}${storeId}`.slice(0, 100);
export const loadersOf = (o: StoredObject) => (o.body.loaders ?? []) as Loader[];

export function loaderOf(store: StoredObject, loaderId: string): Loader {
  const loader = loadersOf(store).find((l) => l.id === loaderId);
  if (!loader) throw notFound('NOT_FOUND', 'Loader', loaderId);
  return loader;
}

export async function ingestInto(caller: Principal, documents: DocumentsApi, input: IngestInput) {
  if (input.source !== 'pdf' && input.content.trim() === '')
    throw validationError('Nothing to load', [{ field: 'loader.config.text', message: 'is empty' }]);
  // Held for the loader that will name it: the same content in another loader of the store is the
  // same document, which goes only when the last loader naming it lets go (`releaseAll`).
  const { processed, document } = await documents.ingest(caller, input, { hold: true });
  return { documentId: document.documentId, chunks: document.chunkCount, processed };
}

/** A chunk of the documents API in Flowise's shape (its offsets kept for an edit, dropped from pages). */
function flowiseChunk(
  storeId: string,
  documentId: string,
  c: {
    chunkId: string;
    index: number;
    pageNumber: number;
    startOffset: number;
    endOffset: number;
    text: string;
  },
) {
  return {
    id: c.chunkId,
    docId: documentId,
    storeId,
    chunkNo: c.index + 1,
    pageContent: c.text,
    metadata: { pageNumber: c.pageNumber },
    startOffset: c.startOffset,
    endOffset: c.endOffset,
  };
}

/**
 * One chunk of a loader by id: a lookup among the loader's documents of the account (a loader may hold
 * tens of thousands of chunks; none is read to find it). Not one of them: 404.
 */
export async function chunkOf(
  accountId: string,
  documents: DocumentsApi,
  storeId: string,
  loader: Loader,
  chunkId: string,
) {
  const found = await documents.documents.findChunk(accountId, loader.documentIds, chunkId);
  if (!found) throw notFound('NOT_FOUND', 'Chunk', chunkId);
  return flowiseChunk(storeId, found.documentId, found);
}

/**
 * Flowise's page of a loader's chunks (`DocumentStoreFileChunkPagedResponse`): its documents in order,
 * each in chunk order. Counted per document, then only the page's rows are read (from one document, or
 * the end of one and the start of the next).
 */
export async function chunkPage(
  accountId: string,
  documents: DocumentsApi,
  store: StoredObject,
  loader: Loader,
  pageNo: number,
) {
  const counts = await documents.documents.chunkCounts(accountId, loader.documentIds);
  const chunks = [];
  // The page's first chunk, counted over the loader's documents.
  let skip = (pageNo - 1) * CHUNKS_PER_PAGE;
  for (const [i, documentId] of loader.documentIds.entries()) {
    if (chunks.length === CHUNKS_PER_PAGE) break;
    const n = counts[i] ?? 0;
    if (skip >= n) {
      skip -= n;
      continue;
    }
    const rows = await documents.documents.chunkRange(accountId, documentId, {
      from: skip,
      limit: CHUNKS_PER_PAGE - chunks.length,
    });
    for (const row of rows) {
      const { startOffset: _s, endOffset: _e, ...chunk } = flowiseChunk(store.id, documentId, row);
      chunks.push(chunk);
    }
    skip = 0;
  }
  return {
    chunks,
    count: counts.reduce((sum, n) => sum + n, 0),
    characters: loader.totalChars,
    file: loader,
    currentPage: pageNo,
    storeName: store.body.name,
    description: store.body.description ?? '',
  };
}

/**
 * Lets go of the loaders' references to `ids` (one per entry: a loader naming a document twice held it
 * twice); a document goes with its last reference. Best effort: a failure leaves a document behind,
 * never deletes one still named.
 */
export async function releaseAll(accountId: string, documents: DocumentsApi, ids: readonly string[]) {
  for (const id of ids) await documents.documents.release(accountId, id).catch(() => undefined);
}
