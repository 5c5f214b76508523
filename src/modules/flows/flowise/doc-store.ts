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

export const topicOf = (storeId: string) => `docstore:${storeId}`.slice(0, 100);
export const loadersOf = (o: StoredObject) => (o.body.loaders ?? []) as Loader[];

export function loaderOf(store: StoredObject, loaderId: string): Loader {
  const loader = loadersOf(store).find((l) => l.id === loaderId);
  if (!loader) throw notFound('NOT_FOUND', 'Loader', loaderId);
  return loader;
}

export async function ingestInto(caller: Principal, documents: DocumentsApi, input: IngestInput) {
  if (input.source !== 'pdf' && input.content.trim() === '')
    throw validationError('Nothing to load', [{ field: 'loader.config.text', message: 'is empty' }]);
  const { processed, document } = await documents.ingest(caller, input);
  return { documentId: document.documentId, chunks: document.chunkCount, processed };
}

/** Every chunk of a loader, in Flowise's chunk shape, its documents in order. */
export async function chunksOf(accountId: string, documents: DocumentsApi, storeId: string, loader: Loader) {
  const all = [];
  for (const documentId of loader.documentIds) {
    const data = [];
    let cursor: string | null | undefined;
    do {
      const page = await documents.documents.chunks(accountId, documentId, cursor ? { cursor } : {});
      data.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
    all.push(
      ...data.map((c) => ({
        id: c.chunkId,
        docId: documentId,
        storeId,
        chunkNo: c.index + 1,
        pageContent: c.text,
        metadata: { pageNumber: c.pageNumber },
        startOffset: c.startOffset,
        endOffset: c.endOffset,
      })),
    );
  }
  return all;
}

/** Flowise's page of a loader's chunks (`DocumentStoreFileChunkPagedResponse`). */
export async function chunkPage(
  accountId: string,
  documents: DocumentsApi,
  store: StoredObject,
  loader: Loader,
  pageNo: number,
) {
  const all = await chunksOf(accountId, documents, store.id, loader);
  return {
    chunks: all
      .slice((pageNo - 1) * CHUNKS_PER_PAGE, pageNo * CHUNKS_PER_PAGE)
      .map(({ startOffset: _s, endOffset: _e, ...chunk }) => chunk),
    count: all.length,
    characters: loader.totalChars,
    file: loader,
    currentPage: pageNo,
    storeName: store.body.name,
    description: store.body.description ?? '',
  };
}
