import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../core/auth/principal.js';
import { AppError, notFound } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { DocumentsApi } from '../documents/index.js';
import {
  chunkOf,
  chunkPage,
  ingestInto,
  type Loader,
  loaderOf,
  loadersOf,
  referencesDropped,
  releaseAll,
  topicOf,
} from './flowise/doc-store.js';
import type { FlowiseObjects, StoredObject } from './flowise/objects.js';
import { withFlowiseErrors } from './schemas.js';

const tags = ['Flows (Flowise API)'];
const flow = { auth: { service: 'flow' }, errorFormat: 'flowise' } as const;
const ChunkParams = Type.Object({
  storeId: Type.String({ minLength: 1, maxLength: 200 }),
  loaderId: Type.String({ minLength: 1, maxLength: 200 }),
  // One name with the page route's (`GET …/{pageOrChunkId}`): a path may name a parameter only one way.
  pageOrChunkId: Type.String({ minLength: 1, maxLength: 200, description: "The chunk's id" }),
});
const ChunkBody = Type.Object(
  {
    pageContent: Type.String({ minLength: 1, maxLength: 100_000 }),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
const Page = Type.Object({}, { additionalProperties: true });

/**
 * Flowise's store refresh and chunk edits on the knowledge base. A chunk is a span of its document's
 * text: editing (or deleting) one rewrites that span and loads the document again, so it is chunked and
 * embedded anew (its chunk ids change; neighbours sharing the overlap change with it).
 */
export function documentStoreChunkRoutes(
  app: FastifyInstance,
  deps: { objects: FlowiseObjects; documents: () => DocumentsApi },
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { objects, documents } = deps;
  const store = (request: FastifyRequest, id: string) =>
    objects.get(principalOf(request).accountId, 'docstore', id);

  r.post(
    '/api/v1/document-store/refresh/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "Chunk, embed and index a document store's loaders again",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: Type.Optional(Type.Object({}, { additionalProperties: true })),
        response: withFlowiseErrors({ 200: Type.Array(Type.Object({}, { additionalProperties: true })) }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const found = await store(request, request.params.id);
      // Each document processed again in place (its id kept): loaders sharing one (the same content)
      // keep naming it, and an upload finding it by its content meanwhile gets it as it is.
      const counts = new Map<string, number>();
      const results = [];
      try {
        for (const loader of loadersOf(found)) {
          let totalChunks = 0;
          for (const documentId of loader.documentIds) {
            if (!counts.has(documentId))
              counts.set(documentId, await reprocess(principal, documentId, loader));
            totalChunks += counts.get(documentId) ?? 0;
          }
          results.push({
            numAdded: totalChunks,
            numDeleted: loader.totalChunks,
            numUpdated: 0,
            numSkipped: 0,
            addedDocs: [],
            docId: loader.id,
          });
        }
      } catch (error) {
        // Stopped by a document that failed: the loaders processed before it still show what they
        // now hold, and the others what they hold as they are (counted).
        await writeTotals(principal, found, counts, true).catch(() => undefined);
        throw error;
      }
      await writeTotals(principal, found, counts, false);
      return results;
    },
  );

  /**
   * The loaders' chunk totals, written on the store's locked row to the loaders that still name what
   * was read (one changed meanwhile by an edit or an upsert keeps its own): from `counts` (documents
   * just processed), and when `recount`, the loaders' other documents counted as they are (a loader
   * whose documents cannot all be counted keeps its total).
   */
  const writeTotals = async (
    principal: Principal,
    found: StoredObject,
    counts: ReadonlyMap<string, number>,
    recount: boolean,
  ): Promise<void> => {
    const totals = new Map<string, number>();
    for (const loader of loadersOf(found)) {
      const ids = loader.documentIds;
      let known = ids.map((d) => counts.get(d));
      if (known.some((n) => n === undefined)) {
        if (!recount) continue;
        const counted = await documents()
          .documents.chunkCounts(principal.accountId, ids)
          .catch(() => null);
        if (counted === null) continue;
        known = ids.map((d, i) => counts.get(d) ?? counted[i]);
      }
      totals.set(
        loader.id,
        known.reduce<number>((n, c) => n + (c ?? 0), 0),
      );
    }
    const readAs = new Map(loadersOf(found).map((l) => [l.id, l.documentIds.join('\n')]));
    await objects.change(principal.accountId, 'docstore', found.id, (current) => ({
      loaders: loadersOf(current).map((l) => {
        const total = totals.get(l.id);
        return total !== undefined && l.documentIds.join('\n') === readAs.get(l.id)
          ? { ...l, totalChunks: total }
          : l;
      }),
    }));
  };

  /** A document of a loader processed again; its chunks then (0 once it is gone: a loader removed meanwhile). */
  const reprocess = async (principal: Principal, documentId: string, loader: Loader) => {
    try {
      const done = await documents().reprocess(principal, documentId, {
        ...(loader.chunkSize !== undefined ? { chunkSize: loader.chunkSize } : {}),
      });
      return done.chunkCount;
    } catch (error) {
      if (error instanceof AppError && error.code === 'DOCUMENT_NOT_FOUND') return 0;
      throw error;
    }
  };

  const rewrite = async (
    principal: Principal,
    found: StoredObject,
    loader: Loader,
    chunkId: string,
    text: string,
  ) => {
    const { accountId } = principal;
    // Every document of the loader is there (one count query): a 404 before anything is loaded or deleted.
    await documents().documents.chunkCounts(accountId, loader.documentIds);
    const chunk = await chunkOf(accountId, documents(), found.id, loader, chunkId);
    const old = await documents().documents.get(accountId, chunk.docId, true);
    const content = (old.pages ?? [])
      .map((p) =>
        p.pageNumber === chunk.metadata.pageNumber
          ? p.text.slice(0, chunk.startOffset) + text + p.text.slice(chunk.endOffset)
          : p.text,
      )
      .join('\n\n');
    let replacement: string[] = [];
    let newChunks = 0;
    if (content.trim() !== '') {
      const made = await ingestInto(principal, documents(), {
        source: 'text',
        content,
        topic: topicOf(found.id),
        ...(old.title ? { title: old.title } : {}),
        metadata: old.metadata,
        ...(loader.chunkSize !== undefined ? { chunkSize: loader.chunkSize } : {}),
      });
      replacement = [made.documentId];
      newChunks = (await documents().documents.get(accountId, made.documentId, false)).chunkCount;
    }
    // The document swapped in the loader as it is now (locked): an edit racing another on the same
    // loader keeps both, and one whose document was replaced meanwhile is refused.
    let saved: { before: StoredObject; after: StoredObject };
    try {
      saved = await objects.change(accountId, 'docstore', found.id, (current) => {
        const now = loaderOf(current, loader.id);
        const at = now.documentIds.indexOf(chunk.docId);
        if (at < 0) throw notFound('NOT_FOUND', 'Chunk', chunkId);
        const next: Loader = {
          ...now,
          // The first entry naming it (a loader of two files of one content names it twice, with a
          // reference each): one chunk edited is one file's text changed.
          documentIds: now.documentIds.flatMap((d, i) => (i === at ? replacement : [d])),
          totalChunks: now.totalChunks - old.chunkCount + newChunks,
          totalChars: now.totalChars - (chunk.endOffset - chunk.startOffset) + text.length,
        };
        return {
          loaders: loadersOf(current).map((l) => (l.id === loader.id ? next : l)),
          ...referencesDropped(objects),
        };
      });
    } catch (error) {
      if (error instanceof AppError) await releaseAll(accountId, documents(), replacement);
      throw error;
    }
    // The loader's reference to the old document goes (the document with it, unless another holds it).
    await releaseAll(accountId, documents(), [chunk.docId]);
    return chunkPage(accountId, documents(), saved.after, loaderOf(saved.after, loader.id), 1);
  };

  r.put(
    '/api/v1/document-store/chunks/:storeId/:loaderId/:pageOrChunkId',
    {
      config: flow,
      schema: {
        tags,
        summary: "Edit a chunk's text (its document is chunked and embedded again)",
        params: ChunkParams,
        body: ChunkBody,
        response: withFlowiseErrors({ 200: Page }),
      },
    },
    async (request) => {
      const found = await store(request, request.params.storeId);
      const loader = loaderOf(found, request.params.loaderId);
      return rewrite(
        principalOf(request),
        found,
        loader,
        request.params.pageOrChunkId,
        request.body.pageContent,
      );
    },
  );
  r.delete(
    '/api/v1/document-store/chunks/:storeId/:loaderId/:pageOrChunkId',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Delete a chunk (its document is chunked and embedded again without it)',
        params: ChunkParams,
        response: withFlowiseErrors({ 200: Page }),
      },
    },
    async (request) => {
      const found = await store(request, request.params.storeId);
      const loader = loaderOf(found, request.params.loaderId);
      return rewrite(principalOf(request), found, loader, request.params.pageOrChunkId, '');
    },
  );
}
