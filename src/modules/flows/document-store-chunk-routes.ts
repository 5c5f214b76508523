import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../core/auth/principal.js';
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
      // On the store's locked row: a loader saved or removed meanwhile is kept or stays gone.
      const refreshed = new Map(loaders.map((l) => [l.id, l]));
      await objects.change(principal.accountId, 'docstore', found.id, (current) => ({
        loaders: loadersOf(current).map((l) => refreshed.get(l.id) ?? l),
      }));
      return results;
    },
  );

  const rewrite = async (
    principal: Principal,
    found: StoredObject,
    loader: Loader,
    chunkId: string,
    text: string,
  ) => {
    const chunk = await chunkOf(principal.accountId, documents(), found.id, loader, chunkId);
    const old = await documents().documents.get(principal.accountId, chunk.docId, true);
    const content = (old.pages ?? [])
      .map((p) =>
        p.pageNumber === chunk.metadata.pageNumber
          ? p.text.slice(0, chunk.startOffset) + text + p.text.slice(chunk.endOffset)
          : p.text,
      )
      .join('\n\n');
    let replacement: string[] = [];
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
    }
    if (!replacement.includes(chunk.docId))
      await documents()
        .documents.delete(principal.accountId, chunk.docId)
        .catch(() => undefined);
    const next: Loader = {
      ...loader,
      documentIds: loader.documentIds.flatMap((d) => (d === chunk.docId ? replacement : [d])),
    };
    next.totalChunks = await countChunks(principal, documents(), next);
    next.totalChars = loader.totalChars - (chunk.endOffset - chunk.startOffset) + text.length;
    const { after: saved } = await objects.change(principal.accountId, 'docstore', found.id, (current) => ({
      loaders: loadersOf(current).map((l) => (l.id === loader.id ? next : l)),
    }));
    return chunkPage(principal.accountId, documents(), saved, next, 1);
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
