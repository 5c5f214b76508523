import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasScope, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { ListEnvelope, listQueryOf, withErrors } from '../../core/http/schemas.js';
import { LIST_SPEC as DOCUMENT_LIST_SPEC, type DocumentService } from './document-service.js';
import type { KnowledgeService } from './knowledge-service.js';
import type { LoadInput } from './loaders/index.js';
import {
  ChunkList,
  ChunkListQuery,
  DocumentGetQuery,
  DocumentParams,
  DocumentView,
  LoadBody,
  ProcessBody,
  ProcessQuery,
  ProcessView,
  QueryBody,
  QueryView,
  TopicList,
} from './schemas.js';

export interface DocumentRouteDeps {
  documents: DocumentService;
  knowledge: KnowledgeService;
  load: (input: LoadInput, accountId: string) => ReturnType<typeof import('./loaders/index.js').loadDocument>;
  bodyLimit: number;
  /** How long `process?wait=true` holds the request. */
  waitMs: number;
  /** Refuses a model the caller may not use, or a spent token budget, before a job is queued. */
  admit(principal: Principal, model: string): Promise<void>;
  defaults: { chunkSize: number; chunkOverlap: number; embeddingModel: string };
}

const tags = ['Documents'];
const knowledgeTags = ['Knowledge base'];
const docproc = { auth: { service: 'docproc' } } as const;
/** `/api/knowledge` is shared with the agent service: either grants it (DESIGN.md). */
const knowledgeRead = { auth: { service: 'docproc', anyService: true } } as const;

function knowledgeReader(request: FastifyRequest): string {
  const p = principalOf(request);
  if (p.kind === 'customer_token')
    throw new AppError('FORBIDDEN', 'Customer tokens are not accepted on this route');
  if (!hasScope(p, 'docproc', 'read') && !hasScope(p, 'agent', 'read'))
    throw new AppError('FORBIDDEN', 'Missing scope: one of docproc:read, agent:read', {
      requiredScope: 'docproc:read',
      acceptedScopes: ['docproc:read', 'agent:read'],
    });
  return p.accountId;
}

export function documentRoutes(app: FastifyInstance, deps: DocumentRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { documents, knowledge } = deps;
  const account = (request: FastifyRequest) => principalOf(request).accountId;

  r.post(
    '/api/documents/load',
    {
      config: docproc,
      bodyLimit: deps.bodyLimit,
      schema: {
        tags,
        summary:
          'Load a document (url, text, markdown, html, pdf, workspace); the same content in a topic is one',
        body: LoadBody,
        response: withErrors({ 200: DocumentView, 201: DocumentView }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const input: LoadInput = { source: body.source };
      if (body.url !== undefined) input.url = body.url;
      if (body.content !== undefined) input.content = body.content;
      if (body.title !== undefined) input.title = body.title;
      const loaded = await deps.load(input, account(request));
      const saved = await documents.create(
        account(request),
        {
          source: body.source,
          topic: body.topic ?? 'default',
          metadata: (body.metadata ?? {}) as Record<string, unknown>,
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.title !== undefined ? { title: body.title } : {}),
        },
        loaded,
      );
      return reply.code(saved.created ? 201 : 200).send(saved.document);
    },
  );

  r.get(
    '/api/documents',
    {
      config: docproc,
      schema: {
        tags,
        summary: 'List documents, newest first (filters topic, status, source)',
        querystring: listQueryOf(DOCUMENT_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(DocumentView) }),
      },
    },
    async (request) => documents.list(account(request), request.query as Record<string, unknown>),
  );

  r.get(
    '/api/documents/:id',
    {
      config: docproc,
      schema: {
        tags,
        summary: 'One document with its pages (`?fields=` without `pages` to skip them)',
        params: DocumentParams,
        querystring: DocumentGetQuery,
        // `fields` may project any field away but `id`.
        response: withErrors({ 200: { ...DocumentView, required: ['id'] } }),
      },
    },
    async (request) => {
      const fields = request.query.fields?.split(',').map((f) => f.trim());
      const doc = await documents.get(
        account(request),
        request.params.id,
        !fields || fields.includes('pages'),
      );
      if (!fields) return doc;
      const kept: Record<string, unknown> = { id: doc.id };
      for (const f of fields) if (f in doc) kept[f] = (doc as Record<string, unknown>)[f];
      return kept as typeof doc;
    },
  );

  r.delete(
    '/api/documents/:id',
    {
      config: docproc,
      schema: {
        tags,
        summary: 'Delete a document with its chunks and vectors',
        params: DocumentParams,
        response: withErrors({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await documents.delete(account(request), request.params.id);
      return reply.code(204).send();
    },
  );

  r.get(
    '/api/documents/:id/chunks',
    {
      config: docproc,
      schema: {
        tags,
        summary: "A document's chunks in order, with page numbers and offsets, a page at a time",
        params: DocumentParams,
        querystring: ChunkListQuery,
        response: withErrors({ 200: ChunkList }),
      },
    },
    async (request) => documents.chunks(account(request), request.params.id, request.query),
  );

  r.post(
    '/api/documents/:id/process',
    {
      config: docproc,
      schema: {
        tags,
        summary:
          'Chunk, embed and index a document on the job queue → 202; with `wait=true`, answer when it ends (200, or 422 when it failed)',
        params: DocumentParams,
        querystring: ProcessQuery,
        body: ProcessBody,
        response: withErrors({ 200: DocumentView, 202: ProcessView }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const chunkSize = body.chunkSize ?? deps.defaults.chunkSize;
      const job = {
        operations: body.operations ?? (['chunk', 'embed', 'index'] as const).slice(),
        chunkSize,
        chunkOverlap: body.chunkOverlap ?? Math.min(deps.defaults.chunkOverlap, Math.floor(chunkSize / 2)),
        embeddingModel: body.embeddingModel ?? deps.defaults.embeddingModel,
        // The embeddings are the calling key's: its models and its token budget (charging.ts).
        payerKeyId: principalOf(request).keyId,
      };
      if (job.operations.includes('embed')) await deps.admit(principalOf(request), job.embeddingModel);
      if (request.query.wait) {
        const done = await documents.processAndWait(account(request), request.params.id, job, deps.waitMs);
        if (done) return reply.code(200).send(done);
        const doc = await documents.get(account(request), request.params.id, false);
        return reply.code(202).send({
          jobId: `process-${doc.id}`,
          documentId: doc.id,
          status: doc.status,
          operations: job.operations,
        });
      }
      return reply.code(202).send(await documents.process(account(request), request.params.id, job));
    },
  );

  r.get(
    '/api/knowledge/topics',
    {
      config: knowledgeRead,
      schema: {
        tags: knowledgeTags,
        summary: 'Topics with their document and chunk counts',
        response: withErrors({ 200: TopicList }),
      },
    },
    async (request) => knowledge.topics(knowledgeReader(request)),
  );

  r.post(
    '/api/knowledge/query',
    {
      config: knowledgeRead,
      schema: {
        tags: knowledgeTags,
        summary: 'Search indexed chunks: hybrid (BM25 + vectors, weighted fusion), vector or keyword',
        body: QueryBody,
        response: withErrors({ 200: QueryView }),
      },
    },
    async (request) => {
      const b = request.body;
      return knowledge.query(knowledgeReader(request), {
        payerKeyId: principalOf(request).keyId,
        query: b.query,
        topK: b.topK ?? 5,
        mode: b.mode ?? 'hybrid',
        ...(b.topics ? { topics: b.topics } : {}),
        ...(b.minScore !== undefined ? { minScore: b.minScore } : {}),
        ...(b.embeddingModel ? { embeddingModel: b.embeddingModel } : {}),
        ...(b.weights ? { weights: b.weights } : {}),
        ...(b.fusion ? { fusion: b.fusion } : {}),
      });
    },
  );
}
