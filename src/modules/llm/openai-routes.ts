import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import {
  type ErrorRenderer,
  errorBody,
  registerErrorFormat,
  registerUnroutedFormat,
} from '../../core/http/error-handler.js';
import { bodyBytesOf } from '../../core/http/json-body.js';
import { ClientGone, sendBody, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import { type ChatSession, callContext, type Gateway, type RelaySession } from './gateway.js';
import type { ConfiguredModel } from './model-file.js';
import { embeddingsOnce } from './openai-calls.js';
import { CompletionWriter, chatFromOpenAi, completionFromOpenAi, OpenAiWriter } from './openai-format.js';
import {
  OpenAiChatBody,
  type OpenAiChatBodyT,
  OpenAiChatResponse,
  OpenAiCompletionBody,
  OpenAiCompletionResponse,
  OpenAiEmbeddingsBody,
  OpenAiEmbeddingsResponse,
  OpenAiModel,
  OpenAiModelList,
  OpenAiModerationBody,
  OpenAiModerationResponse,
  withOpenAiErrors,
} from './openai-schemas.js';

/**
 * OpenAI's API resources: a path under them that no route serves is a 404 in OpenAI's body, so the
 * official clients raise their NotFoundError with the message (files and batches are served; their
 * unknown sub-paths answer the same way). The platform's own `/v1` resources are not here.
 */
const OPENAI_UNSERVED =
  /^\/v1\/(files|batches|audio|images|assistants|threads|responses|fine_tuning|vector_stores|uploads|realtime|evals|containers|conversations)(\/|$)/;
const ownedByOpenAi = (path: string) => OPENAI_UNSERVED.test(path);

const tags = ['Language models: OpenAI API'];
/** What `/v1/moderations` uses when the body names no model (OpenAI's default). */
const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

const OPENAI_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** OpenAI's error body (what its clients parse), with the platform's fields beside it. */
const renderOpenAiError: ErrorRenderer = (error, message, platform) => ({
  error: {
    message,
    type: OPENAI_TYPES[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error'),
    param: null,
    code: error.code.toLowerCase(),
  },
  ...platform,
});
const call = { auth: { service: 'llm' }, errorFormat: 'openai' } as const;

/** Server-sent events; a failure after the first byte is an `error` event, then the stream ends. */
async function* sse(
  session: ChatSession,
  writer: Pick<OpenAiWriter, 'chunks'>,
  includeUsage: boolean,
  requestId: string,
): AsyncGenerator<string> {
  try {
    for await (const event of session.events)
      for (const chunk of writer.chunks(event, includeUsage)) yield `data: ${JSON.stringify(chunk)}\n\n`;
    yield 'data: [DONE]\n\n';
  } catch (error) {
    const appError =
      error instanceof AppError ? error : new AppError('UPSTREAM_ERROR', 'the model failed mid-answer');
    yield `data: ${JSON.stringify(errorBody('openai', appError, requestId))}\n\n`;
  }
}

/** Relayed frames; a failure after the first byte is an `error` event, then the stream ends (as `sse`). */
async function* relayedSse(frames: AsyncGenerator<string>, requestId: string): AsyncGenerator<string> {
  try {
    for await (const text of frames) yield text;
  } catch (error) {
    const appError =
      error instanceof AppError ? error : new AppError('UPSTREAM_ERROR', 'the model failed mid-answer');
    yield `data: ${JSON.stringify(errorBody('openai', appError, requestId))}\n\n`;
  }
}

/** A relayed answer as it came: its bytes whole, or its frames as they come. */
function sendRelayed(
  reply: FastifyReply,
  relayed: RelaySession,
  requestId: string,
): FastifyReply | Promise<FastifyReply> {
  reply.headers(relayed.headers);
  if (relayed.stream) return sendLines(reply, relayed.contentType, relayedSse(relayed.frames, requestId));
  reply.header('content-type', relayed.contentType);
  return reply.send(relayed.body);
}

const USAGE_OPTION = Buffer.from(',"stream_options":{"include_usage":true}');
const MODEL_KEY = Buffer.from('"model"');
const KNOWN_CHAT_FIELDS = new Set(Object.keys(OpenAiChatBody.properties));

/** OpenAI's `developer` role is `system` to the compatible servers that predate it: translated. */
function relayable(body: OpenAiChatBodyT): boolean {
  for (const field in body) if (!KNOWN_CHAT_FIELDS.has(field)) return false;
  return !body.messages.some((m) => m.role === 'developer');
}

/**
 * The body an OpenAI-compatible upstream gets for a relayed chat: the client's bytes, with the
 * model name rewritten when the registry maps it, and the usage asked for in a stream (the usage
 * frame is dropped again when the client did not ask for it). The bytes are a validated JSON
 * object, so the option goes in before its last brace.
 */
function relayBody(bytes: Buffer, body: OpenAiChatBodyT, upstreamModel: string): string | Buffer {
  const stream = body.stream === true;
  const addUsage = stream && body.stream_options?.include_usage !== true;
  // A second "model" key (or the word as a value) is re-serialized: the upstream's JSON parser must
  // not pick another model than the one validated here, which JSON.parse took from the last key.
  const oneModel = bytes.indexOf(MODEL_KEY) === bytes.lastIndexOf(MODEL_KEY);
  if (body.model === upstreamModel && oneModel && !addUsage) return bytes;
  if (body.model === upstreamModel && oneModel && body.stream_options === undefined) {
    const end = bytes.lastIndexOf(125);
    return Buffer.concat([bytes.subarray(0, end), USAGE_OPTION, bytes.subarray(end)]);
  }
  const out: Record<string, unknown> = { ...body, model: upstreamModel };
  if (addUsage) out.stream_options = { ...body.stream_options, include_usage: true };
  return JSON.stringify(out);
}

/** A chat or completion session as its writer shapes it: SSE when streamed, else the whole body. */
async function answer(
  reply: FastifyReply,
  session: ChatSession,
  writer: Pick<OpenAiWriter, 'chunks' | 'collect'>,
  stream: boolean,
  includeUsage: boolean,
  requestId: string,
): Promise<FastifyReply> {
  if (stream)
    return sendLines(
      reply,
      'text/event-stream; charset=utf-8',
      sse(session, writer, includeUsage, requestId),
    );
  for await (const event of session.events) {
    const whole = writer.collect(event);
    if (whole) return sendBody(reply, whole);
  }
  throw new AppError('UPSTREAM_ERROR', 'the model ended its answer without finishing');
}

const modelView = (model: ConfiguredModel, created: number) => ({
  id: model.name,
  object: 'model' as const,
  created,
  owned_by: model.provider,
  // Prices per million tokens where the operator set them (as OpenRouter's model list carries them).
  ...(model.pricing ? { pricing: model.pricing } : {}),
});

export function openAiRoutes(
  app: FastifyInstance,
  gateway: Gateway,
  settings: { startedAt: string; bodyLimit: number },
): void {
  registerErrorFormat('openai', renderOpenAiError, { schemaName: 'OpenAIError' });
  registerUnroutedFormat(ownedByOpenAi, 'openai');
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const created = Math.floor(Date.parse(settings.startedAt) / 1000);
  const contextOf = (request: FastifyRequest, reply: FastifyReply, endpoint: string, stream: boolean) =>
    callContext(principalOf(request), endpoint, stream, new ClientGone(reply));

  r.post(
    '/v1/chat/completions',
    {
      config: call,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary: 'Chat completion (server-sent events with stream: true)',
        body: OpenAiChatBody,
        response: withOpenAiErrors({ 200: OpenAiChatResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const stream = body.stream === true;
      if (stream) holdStreamSlot(request, reply);
      const ctx = contextOf(request, reply, 'chat.completions', stream);
      const asked = chatFromOpenAi(body);
      const bytes = bodyBytesOf(request);
      // Only bodies of known fields are relayed: an extra field would reach the upstream on the
      // platform's provider key, where the translating path ignores it.
      if (bytes && relayable(body)) {
        const relayed = await gateway.relay(ctx, body.model, asked, {
          dialect: 'openai',
          stream,
          includeUsage: body.stream_options?.include_usage === true,
          bodyFor: (upstreamModel) => relayBody(bytes, body, upstreamModel),
        });
        if (relayed) return sendRelayed(reply, relayed, request.id);
      }
      const session = await gateway.chat(ctx, body.model, asked);
      reply.headers(session.headers);
      const writer = new OpenAiWriter(session.model, body.n ?? 1, body.logprobs === true);
      return answer(reply, session, writer, stream, body.stream_options?.include_usage === true, request.id);
    },
  );

  r.post(
    '/v1/embeddings',
    {
      config: call,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary: 'Embeddings (float arrays, or base64 little-endian float32)',
        body: OpenAiEmbeddingsBody,
        response: withOpenAiErrors({ 200: OpenAiEmbeddingsResponse }),
      },
    },
    async (request, reply) => {
      const answer = await embeddingsOnce(
        gateway,
        contextOf(request, reply, 'embeddings', false),
        request.body,
      );
      reply.headers(answer.headers);
      return answer.body;
    },
  );

  r.post(
    '/v1/completions',
    {
      config: call,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary:
          'Legacy text completion, with suffix for fill-in-the-middle (server-sent events with stream: true)',
        body: OpenAiCompletionBody,
        response: withOpenAiErrors({ 200: OpenAiCompletionResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const stream = body.stream === true;
      if (stream) holdStreamSlot(request, reply);
      const ctx = contextOf(request, reply, 'completions', stream);
      const session = await gateway.chat(ctx, body.model, completionFromOpenAi(body));
      reply.headers(session.headers);
      const writer = new CompletionWriter(session.model, body.n ?? 1, body.logprobs != null);
      return answer(reply, session, writer, stream, body.stream_options?.include_usage === true, request.id);
    },
  );

  r.post(
    '/v1/moderations',
    {
      config: call,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary: "Classify texts through a moderation model's provider (OpenAI's)",
        body: OpenAiModerationBody,
        response: withOpenAiErrors({ 200: OpenAiModerationResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const ctx = contextOf(request, reply, 'moderations', false);
      const result = await gateway.moderate(ctx, body.model ?? DEFAULT_MODERATION_MODEL, body.input);
      reply.headers(result.headers);
      return { id: `modr-${randomUUID()}`, model: result.model.name, results: result.results as object[] };
    },
  );

  r.get(
    '/v1/models',
    {
      config: call,
      schema: {
        tags,
        summary: 'The models this key may use',
        response: withOpenAiErrors({ 200: OpenAiModelList }),
      },
    },
    async (request) => ({
      object: 'list' as const,
      data: gateway.registry.visibleTo(principalOf(request)).map((m) => modelView(m, created)),
    }),
  );

  // Model names hold slashes (`builtin/extractive`), so the id is the rest of the path.
  r.get(
    '/v1/models/*',
    {
      config: call,
      schema: {
        tags,
        summary: 'One model',
        params: Type.Object({ '*': Type.String({ minLength: 1, maxLength: 200 }) }),
        response: withOpenAiErrors({ 200: OpenAiModel }),
      },
    },
    async (request) => {
      const name = request.params['*'];
      const model = gateway.registry.get(name, principalOf(request).accountId);
      return modelView(gateway.resolve(principalOf(request), name, model?.kind ?? 'chat'), created);
    },
  );
}
