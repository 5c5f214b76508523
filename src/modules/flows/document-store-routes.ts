import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../core/auth/principal.js';
import { AppError, notFound } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { DocumentsApi } from '../documents/index.js';
import { documentStoreChunkRoutes } from './document-store-chunk-routes.js';
import {
  chunkPage,
  ingestInto,
  type Loader,
  loaderOf,
  loadersOf,
  MAX_UPSERT_FILES,
  referencesDropped,
  releaseAll,
  topicOf,
} from './flowise/doc-store.js';
import type { FlowiseObjects, StoredObject } from './flowise/objects.js';
import {
  loaderNameOf,
  multipartTotalBytes,
  readStoreMultipart,
  type StoreUpsert,
  storeInputs,
} from './flowise/store-files.js';
import { withFlowiseErrors } from './schemas.js';

const tags = ['Flows (Flowise API)'];
const flow = { auth: { service: 'flow' }, errorFormat: 'flowise' } as const;
/** Loaders one store holds. */
const MAX_LOADERS = 200;
/**
 * Documents a store's loaders may name together: as many as its loaders' files (a store-wide delete,
 * refresh or save stays the size it was before loaders could keep what they named).
 */
const MAX_STORE_DOCUMENTS = MAX_LOADERS * MAX_UPSERT_FILES;

const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const StoreBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: true },
);
const StoreView = Type.Object({}, { additionalProperties: true });
const UpsertBody = Type.Object(
  {
    docId: Type.Optional(Type.String({ maxLength: 200 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    replaceExisting: Type.Optional(Type.Boolean()),
    // A multipart upsert's files, as base64 (the form's `files` parts).
    files: Type.Optional(
      Type.Array(Type.Object({ name: Type.String(), type: Type.String(), data: Type.String() }), {
        maxItems: MAX_UPSERT_FILES,
      }),
    ),
    loader: Type.Optional(
      Type.Object(
        {
          name: Type.String({ maxLength: 100 }),
          config: Type.Object(
            { text: Type.Optional(Type.String({ minLength: 1, maxLength: 5_000_000 })) },
            { additionalProperties: true },
          ),
        },
        { additionalProperties: true },
      ),
    ),
    splitter: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: 100 })),
          config: Type.Optional(
            Type.Object(
              { chunkSize: Type.Optional(Type.Integer({ minimum: 50, maximum: 20_000 })) },
              { additionalProperties: true },
            ),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

type UpsertBodyT = StoreUpsert;

/**
 * Flowise's Document Store on the knowledge base: a store is a topic (`docstore:<id>`) and a record of
 * its loaders; upserting text loads, chunks, embeds and indexes it there; the query is the knowledge
 * base's hybrid search. A chatflow retrieves from a store by naming its topic (Postgres store's table).
 */
export function documentStoreRoutes(
  app: FastifyInstance,
  deps: { objects: FlowiseObjects; documents: DocumentsApi | null; maxFileBytes: number },
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { objects } = deps;
  const account = (request: FastifyRequest) => principalOf(request).accountId;
  const documents = (): DocumentsApi => {
    if (!deps.documents)
      throw new AppError('SERVICE_UNAVAILABLE', 'The knowledge base is not enabled on this server');
    return deps.documents;
  };
  const view = (o: StoredObject) => {
    const loaders = loadersOf(o);
    return {
      id: o.id,
      name: o.body.name,
      description: o.body.description ?? '',
      status: loaders.length > 0 ? 'UPSERTED' : 'EMPTY',
      loaders,
      whereUsed: [],
      vectorStoreConfig: null,
      embeddingConfig: null,
      recordManagerConfig: null,
      totalChunks: loaders.reduce((n, l) => n + l.totalChunks, 0),
      totalChars: loaders.reduce((n, l) => n + l.totalChars, 0),
      topic: topicOf(o.id),
      createdDate: o.createdAt,
      updatedDate: o.updatedAt,
    };
  };
  const store = (request: FastifyRequest, id: string) => objects.get(account(request), 'docstore', id);
  const storeFull = () =>
    new AppError('CONFLICT', `A document store holds at most ${MAX_LOADERS} loaders`, { limit: MAX_LOADERS });
  /** Lets go of the loaders' references to `ids`: a document goes with the last (doc-store.ts). */
  const release = (accountId: string, ids: readonly string[]) => releaseAll(accountId, documents(), ids);

  r.post(
    '/api/v1/document-store/store',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Create a document store',
        body: StoreBody,
        response: withFlowiseErrors({ 200: StoreView }),
      },
    },
    async (request) =>
      view(
        await objects.create(account(request), 'docstore', {
          ...referencesDropped(objects),
          name: request.body.name,
          description: request.body.description ?? '',
          loaders: [],
        }),
      ),
  );
  r.get(
    '/api/v1/document-store/store',
    {
      config: flow,
      schema: {
        tags,
        summary: 'List the document stores',
        response: withFlowiseErrors({ 200: Type.Array(StoreView) }),
      },
    },
    async (request) => (await objects.list(account(request), 'docstore')).map(view),
  );
  r.get(
    '/api/v1/document-store/store/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'A document store',
        params: Id,
        response: withFlowiseErrors({ 200: StoreView }),
      },
    },
    async (request) => view(await store(request, request.params.id)),
  );
  r.put(
    '/api/v1/document-store/store/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Rename or describe a document store',
        params: Id,
        body: Type.Partial(StoreBody),
        response: withFlowiseErrors({ 200: StoreView }),
      },
    },
    async (request) => {
      const patch: Record<string, unknown> = {};
      if (request.body.name !== undefined) patch.name = request.body.name;
      if (request.body.description !== undefined) patch.description = request.body.description;
      return view(await objects.update(account(request), 'docstore', request.params.id, patch));
    },
  );
  r.delete(
    '/api/v1/document-store/store/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Delete a document store and its documents',
        params: Id,
        response: withFlowiseErrors({ 200: Type.Object({ affected: Type.Integer() }) }),
      },
    },
    async (request) => {
      // The loaders the store holds as it goes (a racing upsert either landed before or finds it gone).
      const gone = await objects.delete(account(request), 'docstore', request.params.id);
      await release(
        account(request),
        loadersOf(gone).flatMap((l) => l.documentIds),
      );
      // Then what is left in its topic (added there by the documents API, or kept by a loader before
      // loaders named what they kept): nothing can name it once the store is gone.
      await documents().documents.deleteInTopic(account(request), topicOf(gone.id), 'all');
      return { affected: 1 };
    },
  );

  // Multipart (Flowise's `files` with JSON fields) only on the upsert: the parser is this scope's alone.
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: {
        fileSize: deps.maxFileBytes,
        files: MAX_UPSERT_FILES,
        fields: 20,
        fieldSize: 100_000,
        parts: 40,
      },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/api/v1/document-store/upsert/:id',
      {
        // Reads up to twice a file's limit into memory: the per-endpoint limit applies.
        config: { ...flow, auth: { ...flow.auth, endpointLimit: true } },
        bodyLimit: Math.ceil(deps.maxFileBytes * 1.4) + 65_536,
        schema: {
          tags,
          summary:
            "Load text or files into a document store (Flowise's upsert: loader.config.text, data-URL files in the loader's config, or multipart files; a splitter's chunkSize)",
          params: Id,
          body: UpsertBody,
          response: withFlowiseErrors({ 200: Type.Object({}, { additionalProperties: true }) }),
        },
        preValidation: async (request) => {
          if (request.isMultipart())
            request.body = await readStoreMultipart(request, multipartTotalBytes(deps.maxFileBytes));
        },
      },
      async (request) => upsert(principalOf(request), request.params.id, request.body as UpsertBodyT),
    );
  });

  const upsert = async (principal: Principal, storeId: string, b: UpsertBodyT) => {
    const found = await objects.get(principal.accountId, 'docstore', storeId);
    const loaders = loadersOf(found);
    const replaced = b.docId !== undefined ? loaders.find((l) => l.id === b.docId) : undefined;
    if (b.docId !== undefined && !replaced) throw notFound('NOT_FOUND', 'Loader', b.docId);
    // Refused before the (slow) loading when it cannot fit; the check that holds is the locked one below.
    if (!replaced && loaders.length >= MAX_LOADERS) throw storeFull();
    const chunkSize = b.splitter?.config?.chunkSize ?? replaced?.chunkSize;
    const inputs = storeInputs(b, topicOf(found.id), chunkSize);
    const loaded: Loaded[] = [];
    let processed = true;
    try {
      for (const input of inputs) {
        const result = await ingestInto(principal, documents(), input);
        loaded.push({
          documentId: result.documentId,
          chunks: result.chunks,
          chars: input.source === 'pdf' ? 0 : input.content.length,
        });
        processed &&= result.processed;
      }
    } catch (error) {
      // A file that failed to load: the ones loaded before it are named by no loader.
      await release(
        principal.accountId,
        loaded.map((l) => l.documentId),
      );
      throw error;
    }
    const documentIds = loaded.map((l) => l.documentId);
    const chunks = loaded.reduce((n, l) => n + l.chunks, 0);
    const name = b.loader?.name ?? loaderNameOf(b.files?.[0]);
    const loader: Loader = {
      id: replaced?.id ?? randomUUID(),
      loaderId: name,
      loaderName: name,
      status: 'SYNC',
      totalChunks: chunks,
      totalChars: loaded.reduce((n, l) => n + l.chars, 0),
      source: inputs.map((i) => i.title ?? name).join(', '),
      documentIds,
      ...(chunkSize !== undefined ? { chunkSize } : {}),
    };
    // Added to the list as it is now, on the store's locked row: upserts racing on one store keep
    // each other's loaders, and a burst cannot pass the bound. The loading above took its time, so
    // the store may have filled up, or lost the replaced loader, meanwhile.
    let saved: { before: StoredObject; after: StoredObject };
    try {
      saved = await objects.change(principal.accountId, 'docstore', found.id, (current) => {
        const now = loadersOf(current);
        if (replaced) {
          const previous = now.find((l) => l.id === replaced.id);
          if (!previous) throw notFound('NOT_FOUND', 'Loader', replaced.id);
          // Replaced: the previous loader's references (all, or those loaded again) go after this save.
          if (b.replaceExisting ?? true)
            return {
              loaders: withinDocuments(
                now.map((l) => (l.id === replaced.id ? loader : l)),
                now,
              ),
              ...referencesDropped(objects),
            };
          const next = keeping(loader, previous, loaded);
          return {
            loaders: withinDocuments(
              now.map((l) => (l.id === replaced.id ? next : l)),
              now,
            ),
            ...referencesDropped(objects),
          };
        }
        if (now.length >= MAX_LOADERS) throw storeFull();
        return { loaders: withinDocuments([...now, loader], now) };
      });
    } catch (error) {
      // Refused (full, or the loader or the store gone): this upsert's references go (a document
      // another loader holds, or another upload is about to save, stays). Not on a database failure:
      // the save may have landed.
      if (error instanceof AppError) await release(principal.accountId, documentIds);
      throw error;
    }
    if (replaced) {
      // The replaced loader's references go; `replaceExisting: false` keeps its documents in the store
      // (Flowise's "add to the existing records"), named by the loader (`keeping`), but not a second
      // reference to one it loaded again (the same content): that one goes.
      const previous = loadersOf(saved.before).find((l) => l.id === replaced.id)?.documentIds ?? [];
      const again = [...documentIds];
      const gone = (b.replaceExisting ?? true) ? previous : previous.filter((id) => takeOne(again, id));
      await release(principal.accountId, gone);
    }
    return {
      numAdded: chunks,
      numDeleted: 0,
      numUpdated: replaced ? 1 : 0,
      numSkipped: processed ? 0 : 1,
      addedDocs: [],
      docId: loader.id,
    };
  };

  r.post(
    '/api/v1/document-store/vectorstore/query',
    {
      config: flow,
      schema: {
        tags,
        summary: "Search a document store (the knowledge base's hybrid search)",
        body: Type.Object(
          {
            storeId: Type.String({ minLength: 1, maxLength: 200 }),
            query: Type.String({ minLength: 1, maxLength: 4_000 }),
            topK: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          },
          { additionalProperties: true },
        ),
        response: withFlowiseErrors({ 200: Type.Object({}, { additionalProperties: true }) }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const found = await store(request, request.body.storeId);
      const started = performance.now();
      const { results } = await documents().knowledge.query(principal.accountId, {
        payerKeyId: principal.keyId,
        query: request.body.query,
        topK: request.body.topK ?? 4,
        topics: [topicOf(found.id)],
        mode: 'hybrid',
      });
      return {
        timeTaken: Math.round(performance.now() - started),
        docs: results.map((d) => ({
          id: d.documentId,
          pageContent: d.text,
          metadata: {
            documentId: d.documentId,
            title: d.title ?? null,
            pageNumber: d.pageNumber,
            score: d.score,
          },
        })),
      };
    },
  );

  r.delete(
    '/api/v1/document-store/loader/:storeId/:loaderId',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Remove a loader and its documents from a store',
        params: Type.Object({
          storeId: Type.String({ maxLength: 200 }),
          loaderId: Type.String({ maxLength: 200 }),
        }),
        response: withFlowiseErrors({ 200: StoreView }),
      },
    },
    async (request) => {
      const { storeId, loaderId } = request.params;
      // Removed from the list as it is now (locked), then its references to its documents.
      const { before, after } = await objects.change(account(request), 'docstore', storeId, (current) => {
        const loaders = loadersOf(current);
        if (!loaders.some((l) => l.id === loaderId)) throw notFound('NOT_FOUND', 'Loader', loaderId);
        return { loaders: loaders.filter((l) => l.id !== loaderId), ...referencesDropped(objects) };
      });
      await release(account(request), loaderOf(before, loaderId).documentIds);
      return view(after);
    },
  );
  r.delete(
    '/api/v1/document-store/vectorstore/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "Empty a store's index (its documents)",
        params: Id,
        response: withFlowiseErrors({ 200: Type.Object({ deleted: Type.Integer() }) }),
      },
    },
    async (request) => {
      // Emptied as it is now (locked): a loader added meanwhile goes with the others, documents too.
      const { before } = await objects.change(account(request), 'docstore', request.params.id, () => ({
        loaders: [],
        ...referencesDropped(objects),
      }));
      const ids = loadersOf(before).flatMap((l) => l.documentIds);
      await release(account(request), ids);
      // And what nobody holds in its topic; not a document an upload into the store still loads.
      const unnamed = await documents().documents.deleteInTopic(
        account(request),
        topicOf(before.id),
        'unheld',
      );
      return { deleted: ids.length + unnamed };
    },
  );
  r.get(
    '/api/v1/document-store/chunks/:storeId/:loaderId/:pageOrChunkId',
    {
      config: flow,
      schema: {
        tags,
        summary: "A page of a loader's chunks",
        params: Type.Object({
          storeId: Type.String({ maxLength: 200 }),
          loaderId: Type.String({ maxLength: 200 }),
          pageOrChunkId: Type.Integer({
            minimum: 1,
            maximum: 100_000,
            description: 'The page number, from 1',
          }),
        }),
        response: withFlowiseErrors({ 200: Type.Object({}, { additionalProperties: true }) }),
      },
    },
    async (request) => {
      const { storeId, loaderId, pageOrChunkId: pageNo } = request.params;
      const found = await store(request, storeId);
      return chunkPage(account(request), documents(), found, loaderOf(found, loaderId), pageNo);
    },
  );
  documentStoreChunkRoutes(app, { objects, documents });
}

/** Removes one entry `id` from `list`; whether there was one. */
/** A document an upsert loaded, with its size (a loader's totals add these up). */
interface Loaded {
  documentId: string;
  chunks: number;
  chars: number;
}

/**
 * A loader loaded again with `replaceExisting: false`: it names what it loaded now and what it named
 * before and did not load again, so its documents go with it (and with its store) and none is left
 * in the store's topic named by no loader. Totals add the new documents only.
 */
/**
 * The loaders, when together they name at most MAX_STORE_DOCUMENTS documents: whatever way a store
 * grows (a loader kept and added to, or a new one beside loaders that were), its delete, refresh and
 * save stay bounded.
 */
function withinDocuments(loaders: Loader[], was: readonly Loader[]): Loader[] {
  const named = (list: readonly Loader[]) => list.reduce((n, l) => n + l.documentIds.length, 0);
  // A save that names no more than before passes (a store over the bound from before can shrink).
  const total = named(loaders);
  if (total > MAX_STORE_DOCUMENTS && total > named(was))
    throw new AppError(
      'CONFLICT',
      `A document store's loaders name at most ${MAX_STORE_DOCUMENTS} documents: load with replaceExisting true, or remove loaders`,
      { limit: MAX_STORE_DOCUMENTS },
    );
  return loaders;
}

function keeping(loader: Loader, previous: Loader, loaded: readonly Loaded[]): Loader {
  const kept = [...previous.documentIds];
  let totalChunks = previous.totalChunks;
  let totalChars = previous.totalChars;
  for (const l of loaded) {
    if (takeOne(kept, l.documentId)) continue;
    totalChunks += l.chunks;
    totalChars += l.chars;
  }
  return { ...loader, documentIds: [...loader.documentIds, ...kept], totalChunks, totalChars };
}

function takeOne(list: string[], id: string): boolean {
  const at = list.indexOf(id);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}
