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
      const results = [];
      const loaders: Loader[] = [];
      for (const loader of loadersOf(found)) {
        const documentIds: string[] = [];
        for (const documentId of loader.documentIds) {
          // Loaded again from its stored text: the same content would be the same (indexed) document.
          const old = await documents().documents.get(principal.accountId, documentId, true);
          await documents().documents.delete(principal.accountId, documentId);
          const content = (old.pages ?? []).map((p) => p.text).join('\n\n');
          if (content.trim() === '') continue;
          const made = await ingestInto(principal, documents(), {
            source: 'text',
            content,
            topic: topicOf(found.id),
            ...(old.title ? { title: old.title } : {}),
            metadata: old.metadata,
            ...(loader.chunkSize !== undefined ? { chunkSize: loader.chunkSize } : {}),
          });
          documentIds.push(made.documentId);
        }
        const next = { ...loader, documentIds };
        next.totalChunks = await countChunks(principal, documents(), next);
        loaders.push(next);
        results.push({
          numAdded: next.totalChunks,
          numDeleted: loader.totalChunks,
          numUpdated: 0,
          numSkipped: 0,
          addedDocs: [],
          docId: loader.id,
        });
      }
      // On the store's locked row: a loader saved or removed meanwhile is kept or stays gone, and one
      // changed meanwhile (an edit, an upsert replacing it) keeps that change; the documents this
      // refresh loaded for those two go.
      const refreshed = new Map(loaders.map((l) => [l.id, l]));
      const readAs = new Map(loadersOf(found).map((l) => [l.id, l.documentIds.join('\n')]));
      let unused: string[] = [];
      await objects.change(principal.accountId, 'docstore', found.id, (current) => {
        unused = [];
        const now = loadersOf(current);
        const kept = new Set(now.map((l) => l.id));
        for (const l of loaders) if (!kept.has(l.id)) unused.push(...l.documentIds);
        return {
          loaders: now.map((l) => {
            const next = refreshed.get(l.id);
            if (!next) return l;
            if (l.documentIds.join('\n') === readAs.get(l.id)) return next;
            unused.push(...next.documentIds);
            return l;
          }),
        };
      });
      await dropUnheld(principal.accountId, found.id, unused);
      return results;
    },
  );

  /** Whether a loader of the store `o` holds document `id`. */
  const held = (o: StoredObject | null, id: string) =>
    o !== null && loadersOf(o).some((l) => l.documentIds.includes(id));
  /** Drops the documents of `ids` that no loader of the store holds now (all of them once it is gone). */
  const dropUnheld = async (accountId: string, storeId: string, ids: readonly string[]) => {
    const now = await objects.get(accountId, 'docstore', storeId).catch(() => null);
    for (const id of ids)
      if (!held(now, id))
        await documents()
          .documents.delete(accountId, id)
          .catch(() => undefined);
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
        if (!now.documentIds.includes(chunk.docId)) throw notFound('NOT_FOUND', 'Chunk', chunkId);
        const next: Loader = {
          ...now,
          documentIds: now.documentIds.flatMap((d) => (d === chunk.docId ? replacement : [d])),
          totalChunks: now.totalChunks - old.chunkCount + newChunks,
          totalChars: now.totalChars - (chunk.endOffset - chunk.startOffset) + text.length,
        };
        return { loaders: loadersOf(current).map((l) => (l.id === loader.id ? next : l)) };
      });
    } catch (error) {
      if (error instanceof AppError)
        await dropUnheld(accountId, found.id, replacement).catch(() => undefined);
      throw error;
    }
    // The old document goes once no loader names it.
    if (!held(saved.after, chunk.docId))
      await documents()
        .documents.delete(accountId, chunk.docId)
        .catch(() => undefined);
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

async function countChunks(principal: Principal, documents: DocumentsApi, loader: Loader): Promise<number> {
  let n = 0;
  for (const id of loader.documentIds)
    n += (await documents.documents.get(principal.accountId, id, false)).chunkCount;
  return n;
}
