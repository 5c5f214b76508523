import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../core/http/auth-hook.js';
import { type ErrorRenderer, registerErrorFormat } from '../../core/http/error-handler.js';
import { clientGone, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import type { FlowService } from './flow-service.js';
import type { FlowStore } from './flow-store.js';
import { MAX_FLOW_DATA_CHARS } from './flowise/flow-data.js';
import type { FlowiseObjects } from './flowise/objects.js';
import { jsonField, multipartTotalBytes, readMultipartFiles } from './flowise/store-files.js';
import { flowiseEvents, metadataOf } from './flowise-stream.js';
import { listMessages, messageFilterOf } from './messages.js';
import type { PredictionService } from './prediction-service.js';
import {
  FlowBody,
  FlowParams,
  FlowView,
  MessageQuery,
  MessageView,
  PredictionBody,
  PredictionView,
  StreamingView,
  UpsertBody,
  UpsertView,
  withFlowiseErrors,
} from './schemas.js';
import type { UpsertInput, UpsertService } from './upsert-service.js';

export interface FlowRouteDeps {
  flows: FlowService;
  store: FlowStore;
  predictions: PredictionService;
  upserts: UpsertService;
  predictionBodyLimit: number;
  /** Largest file of a multipart upsert. */
  maxFileBytes: number;
  objects: FlowiseObjects;
}

const tags = ['Flows (Flowise API)'];
const flow = { auth: { service: 'flow' }, errorFormat: 'flowise' } as const;
const MAX_UPLOAD_FILES = 20;
/** A chatflow's body: its flowData (at most MAX_FLOW_DATA_CHARS, JSON-escaped once more) and fields. */
const FLOW_BODY_LIMIT = MAX_FLOW_DATA_CHARS * 2 + 65_536;

/** Flowise's InternalFlowiseError body; `error: true` keeps it the platform's shape too. */
const renderFlowiseError: ErrorRenderer = (error, _message, platform) => ({
  statusCode: error.status,
  success: false,
  error: true,
  ...platform,
});

export function flowRoutes(app: FastifyInstance, deps: FlowRouteDeps): void {
  registerErrorFormat('flowise', renderFlowiseError, { schemaName: 'FlowiseError' });
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { flows, predictions } = deps;
  const account = (request: FastifyRequest) => principalOf(request).accountId;

  r.get(
    '/api/v1/chatflows',
    {
      config: flow,
      schema: {
        tags,
        summary: "The account's flows",
        response: withFlowiseErrors({ 200: Type.Array(FlowView) }),
      },
    },
    async (request) => flows.list(account(request)),
  );

  r.post(
    '/api/v1/chatflows',
    {
      config: flow,
      bodyLimit: FLOW_BODY_LIMIT,
      schema: {
        tags,
        summary:
          "Create a flow, or import Flowise's flowData (validated: models, topics, workflow, node types)",
        body: FlowBody,
        response: withFlowiseErrors({ 201: FlowView }),
      },
    },
    async (request, reply) => reply.code(201).send(await flows.create(principalOf(request), request.body)),
  );

  r.get(
    '/api/v1/chatflows/:id',
    {
      config: flow,
      schema: { tags, summary: 'A flow', params: FlowParams, response: withFlowiseErrors({ 200: FlowView }) },
    },
    async (request) => flows.get(account(request), request.params.id),
  );

  r.put(
    '/api/v1/chatflows/:id',
    {
      config: flow,
      bodyLimit: FLOW_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Change a flow (the fields sent; validated like a new one)',
        params: FlowParams,
        body: FlowBody,
        response: withFlowiseErrors({ 200: FlowView }),
      },
    },
    async (request) => flows.replace(principalOf(request), request.params.id, request.body),
  );

  r.delete(
    '/api/v1/chatflows/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Delete a flow and its chat messages',
        params: FlowParams,
        response: withFlowiseErrors({ 200: Type.Object({ deleted: Type.Literal(true), id: Type.String() }) }),
      },
    },
    async (request) => {
      await flows.delete(account(request), request.params.id);
      return { deleted: true as const, id: request.params.id };
    },
  );

  // The Flowise SDK asks this before every prediction, without its key: it answers that bit only.
  r.get(
    '/api/v1/chatflows-streaming/:id',
    {
      config: { public: true, limited: true, errorFormat: 'flowise' },
      schema: {
        tags,
        summary: 'Whether a flow streams (no key: the SDK asks first)',
        params: FlowParams,
        response: withFlowiseErrors({ 200: StreamingView }),
      },
    },
    async (request) => ({ isStreaming: await flows.isStreaming(request.params.id) }),
  );

  r.post(
    '/api/v1/prediction/:id',
    {
      config: flow,
      bodyLimit: deps.predictionBodyLimit,
      schema: {
        tags,
        summary:
          "Ask a flow (Flowise's prediction; server-sent events with streaming: true on a streaming flow)",
        params: FlowParams,
        body: PredictionBody,
        response: withFlowiseErrors({ 200: PredictionView }),
      },
    },
    async (request, reply) => {
      if (request.body.streaming === true) holdStreamSlot(request, reply);
      const prediction = await predictions.predict(principalOf(request), request.params.id, request.body, {
        signal: clientGone(reply),
      });
      reply.headers(prediction.headers);
      if (prediction.streaming) {
        reply.header('connection', 'keep-alive');
        return sendLines(reply, 'text/event-stream', flowiseEvents(prediction));
      }
      let text = '';
      for await (const token of prediction.tokens) text += token;
      return {
        text,
        ...metadataOf(prediction),
        sourceDocuments: prediction.sourceDocuments,
        ...(prediction.usedTools && prediction.usedTools.length > 0
          ? { usedTools: prediction.usedTools }
          : {}),
      };
    },
  );

  r.get(
    '/api/v1/chatmessage/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "A flow's chat messages (filters: chatId, sessionId, dates; sort ASC or DESC)",
        params: FlowParams,
        querystring: MessageQuery,
        response: withFlowiseErrors({ 200: Type.Array(MessageView) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      return listMessages(deps.store, request.params.id, request.query);
    },
  );

  r.delete(
    '/api/v1/chatmessage/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "Delete a flow's chat messages (all, or those the filters select)",
        params: FlowParams,
        querystring: MessageQuery,
        response: withFlowiseErrors({ 200: Type.Object({ deleted: Type.Integer() }) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      return { deleted: await deps.store.deleteMessages(request.params.id, messageFilterOf(request.query)) };
    },
  );

  // Multipart (Flowise's `files`) only here: the parser is registered in this route's scope alone.
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: {
        fileSize: deps.maxFileBytes,
        files: MAX_UPLOAD_FILES,
        fields: 20,
        fieldSize: 100_000,
        parts: 40,
      },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/api/v1/vector/upsert/:id',
      {
        config: flow,
        bodyLimit: Math.ceil(deps.maxFileBytes * 1.4) + 65_536,
        schema: {
          tags,
          summary: "Load documents into a rag flow's topic (JSON documents, or multipart files)",
          params: FlowParams,
          body: UpsertBody,
          response: withFlowiseErrors({ 200: UpsertView }),
        },
        // A multipart body becomes the JSON shape before validation, so both are checked alike.
        preValidation: async (request) => {
          if (request.isMultipart()) request.body = await readMultipart(request, deps.maxFileBytes);
        },
      },
      // A client that goes away stops the upsert's loaders (their request in flight too).
      async (request, reply) =>
        deps.upserts.upsert(
          principalOf(request),
          request.params.id,
          request.body as UpsertInput,
          clientGone(reply),
        ),
    );
  });
}

/**
 * Flowise's upsert form: `files` (any number of parts, together at most twice one file's limit),
 * `topic`, `stopNodeId`, `chunkSize`, `metadata` and `overrideConfig` (JSON); other fields ignored.
 */
async function readMultipart(
  request: FastifyRequest,
  maxFileBytes: number,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const files = await readMultipartFiles(request, multipartTotalBytes(maxFileBytes), (name, value) => {
    if (name === 'topic') body.topic = value;
    else if (name === 'stopNodeId') body.stopNodeId = value;
    else if (name === 'chunkSize') body.chunkSize = Number(value);
    else if (name === 'metadata' || name === 'overrideConfig') body[name] = jsonField(name, value);
  });
  if (files.length > 0) body.files = files;
  return body;
}
