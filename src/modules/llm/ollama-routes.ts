import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import {
  type ErrorRenderer,
  registerErrorFormat,
  registerUnroutedFormat,
} from '../../core/http/error-handler.js';
import { bodyBytesOf } from '../../core/http/json-body.js';
import { ClientGone, sendBody, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import { type ChatSession, callContext, type Gateway, type RelaySession } from './gateway.js';
import {
  chatFromGenerate,
  chatFromOllama,
  loadAnswer,
  OllamaWriter,
  showOf,
  tagOf,
} from './ollama-format.js';
import {
  OllamaChatBody,
  type OllamaChatBodyT,
  OllamaChatResponse,
  OllamaEmbedBody,
  OllamaEmbedResponse,
  OllamaGenerateBody,
  type OllamaGenerateBodyT,
  OllamaGenerateResponse,
  OllamaLegacyEmbeddingsBody,
  OllamaLegacyEmbeddingsResponse,
  OllamaPsResponse,
  OllamaShowBody,
  OllamaShowResponse,
  OllamaTagsResponse,
  OllamaVersionResponse,
  withOllamaErrors,
} from './ollama-schemas.js';
import type { EmbedRequest } from './types.js';

/** The Ollama API version whose wire format these routes speak (what `/api/version` reports). */
const OLLAMA_COMPAT_VERSION = '0.12.6';
/** How long `/api/ps` lists a model after it last answered, as Ollama's default keep-alive. */
const PS_WINDOW_MS = 5 * 60_000;

const tags = ['Language models: Ollama API'];

/** Ollama's API paths this gateway does not serve: their 404 is in Ollama's body, for its clients. */
const OLLAMA_UNSERVED = /^\/api\/(pull|create|copy|delete|push|blobs)(\/|$)/;
const ownedByOllama = (path: string) => OLLAMA_UNSERVED.test(path);
const call = { auth: { service: 'llm' }, errorFormat: 'ollama' } as const;
/** `/api/show` is a POST that reads: a Reader key may ask it. */
const read = { auth: { service: 'llm', operation: 'read' }, errorFormat: 'ollama' } as const;

/** Ollama's error body (`{"error": "…"}`, what its clients show), with the platform's fields beside it. */
const renderOllamaError: ErrorRenderer = (_error, message, platform) => ({ error: message, ...platform });

/** A stream ends with an `{"error": …}` line when the model fails after its first byte. */
async function* ndjson(session: ChatSession, writer: OllamaWriter): AsyncGenerator<string> {
  try {
    for await (const event of session.events) yield `${JSON.stringify(writer.chunk(event))}\n`;
  } catch (error) {
    const message = error instanceof Error ? error.message : 'the model failed';
    yield `${JSON.stringify({ error: message })}\n`;
  }
}

/** Relayed lines; a failure after the first byte is an `{"error": …}` line, then the stream ends (as `ndjson`). */
async function* relayedNdjson(frames: AsyncGenerator<string>): AsyncGenerator<string> {
  try {
    for await (const text of frames) yield text;
  } catch (error) {
    const message = error instanceof Error ? error.message : 'the model failed';
    yield `${JSON.stringify({ error: message })}\n`;
  }
}

/** A relayed answer as it came: its bytes whole, or its lines as they come. */
function sendRelayed(reply: FastifyReply, relayed: RelaySession): FastifyReply | Promise<FastifyReply> {
  reply.headers(relayed.headers);
  if (relayed.stream) return sendLines(reply, relayed.contentType, relayedNdjson(relayed.frames));
  reply.header('content-type', relayed.contentType);
  return reply.send(relayed.body);
}

const KNOWN_CHAT_FIELDS = new Set(Object.keys(OllamaChatBody.properties));
const KNOWN_GENERATE_FIELDS = new Set(Object.keys(OllamaGenerateBody.properties));
const KNOWN_MESSAGE_FIELDS = new Set(['role', 'content', 'images', 'tool_calls', 'tool_name', 'thinking']);
const MODEL_KEY = Buffer.from('"model"');

/**
 * Only bodies of fields the gateway knows are relayed (messages' too): an extra one would reach the
 * upstream on the platform's side where the translating path ignores it.
 */
function relayable(body: Record<string, unknown>, known: ReadonlySet<string>): boolean {
  for (const field in body) if (!known.has(field)) return false;
  const messages = (body as OllamaChatBodyT).messages;
  if (messages)
    for (const message of messages)
      for (const field in message) if (!KNOWN_MESSAGE_FIELDS.has(field)) return false;
  return true;
}

/**
 * The body an Ollama upstream gets for a relayed call: the client's bytes, or them re-serialized with
 * the upstream's model name when the registry maps it or the bytes name `"model"` twice (the
 * upstream's parser must not pick another model than the one checked here).
 */
function relayBody(bytes: Buffer, body: OllamaChatBodyT | OllamaGenerateBodyT, upstreamModel: string) {
  const oneModel = bytes.indexOf(MODEL_KEY) === bytes.lastIndexOf(MODEL_KEY);
  if (body.model === upstreamModel && oneModel) return bytes;
  return JSON.stringify({ ...body, model: upstreamModel });
}

/** What both embedding routes pass on besides the input: Ollama's options and keep_alive. */
function embedOptions(body: {
  options?: Record<string, unknown>;
  keep_alive?: string | number;
}): Omit<EmbedRequest, 'model' | 'input'> {
  const out: Omit<EmbedRequest, 'model' | 'input'> = {};
  if (body.options !== undefined) out.options = body.options;
  if (body.keep_alive !== undefined) out.keepAlive = body.keep_alive;
  return out;
}

async function answer(
  reply: FastifyReply,
  session: ChatSession,
  writer: OllamaWriter,
  stream: boolean,
): Promise<FastifyReply> {
  reply.headers(session.headers);
  if (stream) return sendLines(reply, 'application/x-ndjson', ndjson(session, writer));
  for await (const event of session.events) {
    const whole = writer.collect(event);
    if (whole) return reply.send(whole);
  }
  throw new AppError('UPSTREAM_ERROR', 'the model ended its answer without finishing');
}

export function ollamaRoutes(
  app: FastifyInstance,
  gateway: Gateway,
  settings: { startedAt: string; bodyLimit: number },
): void {
  registerErrorFormat('ollama', renderOllamaError, { schemaName: 'OllamaError' });
  registerUnroutedFormat(ownedByOllama, 'ollama');
  const { startedAt, bodyLimit } = settings;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => performance.now();
  const contextOf = (request: FastifyRequest, reply: FastifyReply, endpoint: string, stream: boolean) => {
    // A stream's slot is taken before the model is called: a refusal starts nothing upstream.
    if (stream) holdStreamSlot(request, reply);
    return callContext(principalOf(request), endpoint, stream, new ClientGone(reply));
  };

  r.post(
    '/api/chat',
    {
      config: call,
      bodyLimit,
      schema: {
        tags,
        summary: 'Chat with a model (NDJSON stream unless stream is false)',
        body: OllamaChatBody,
        response: withOllamaErrors({ 200: OllamaChatResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const stream = body.stream ?? true;
      const started = now();
      const ctx = contextOf(request, reply, 'chat', stream);
      if (!body.messages?.length)
        return sendBody(reply, loadAnswer(gateway.resolve(ctx.principal, body.model, 'chat'), 'chat'));
      const asked = chatFromOllama(body);
      const bytes = bodyBytesOf(request);
      if (bytes && relayable(body, KNOWN_CHAT_FIELDS)) {
        const relayed = await gateway.relay(ctx, body.model, asked, {
          dialect: 'ollama',
          stream,
          includeUsage: false,
          bodyFor: (upstreamModel) => relayBody(bytes, body, upstreamModel),
        });
        if (relayed) return sendRelayed(reply, relayed);
      }
      const session = await gateway.chat(ctx, body.model, asked);
      return answer(reply, session, new OllamaWriter(session.model, 'chat', now, started), stream);
    },
  );

  r.post(
    '/api/generate',
    {
      config: call,
      bodyLimit,
      schema: {
        tags,
        summary: 'Complete a prompt (a one-turn chat; NDJSON stream unless stream is false)',
        body: OllamaGenerateBody,
        response: withOllamaErrors({ 200: OllamaGenerateResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const stream = body.stream ?? true;
      const started = now();
      const ctx = contextOf(request, reply, 'generate', stream);
      if (!body.prompt && !body.images?.length)
        return sendBody(reply, loadAnswer(gateway.resolve(ctx.principal, body.model, 'chat'), 'generate'));
      const asked = chatFromGenerate(body);
      const bytes = bodyBytesOf(request);
      if (bytes && relayable(body, KNOWN_GENERATE_FIELDS)) {
        const relayed = await gateway.relay(ctx, body.model, asked, {
          dialect: 'ollama',
          stream,
          includeUsage: false,
          generate: true,
          bodyFor: (upstreamModel) => relayBody(bytes, body, upstreamModel),
        });
        if (relayed) return sendRelayed(reply, relayed);
      }
      const session = await gateway.chat(ctx, body.model, asked);
      return answer(reply, session, new OllamaWriter(session.model, 'generate', now, started), stream);
    },
  );

  r.post(
    '/api/embed',
    {
      config: call,
      bodyLimit,
      schema: {
        tags,
        summary: 'Embed one text or many',
        body: OllamaEmbedBody,
        response: withOllamaErrors({ 200: OllamaEmbedResponse }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      const ctx = contextOf(request, reply, 'embed', false);
      const options = embedOptions(body);
      if (body.truncate !== undefined) options.truncate = body.truncate;
      if (body.dimensions !== undefined) options.dimensions = body.dimensions;
      const result = await gateway.embed(ctx, body.model, input, options);
      reply.headers(result.headers);
      return {
        model: result.model.name,
        embeddings: result.embeddings,
        total_duration: result.totalNs,
        load_duration: 0,
        prompt_eval_count: result.promptTokens,
      };
    },
  );

  r.post(
    '/api/embeddings',
    {
      // Ollama replaced it with /api/embed; it keeps answering (docs/versioning.md).
      config: { ...call, deprecation: { since: '2026-11-24', link: '/api/embed' } },
      bodyLimit,
      schema: {
        tags,
        summary: 'Embed one text (the API before /api/embed)',
        body: OllamaLegacyEmbeddingsBody,
        response: withOllamaErrors({ 200: OllamaLegacyEmbeddingsResponse }),
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request, reply, 'embeddings', false);
      const body = request.body;
      const result = await gateway.embed(ctx, body.model, [body.prompt], embedOptions(body));
      reply.headers(result.headers);
      return { embedding: result.embeddings[0] ?? [] };
    },
  );

  r.get(
    '/api/tags',
    {
      config: call,
      schema: {
        tags,
        summary: 'The models this key may use',
        response: withOllamaErrors({ 200: OllamaTagsResponse }),
      },
    },
    async (request) => ({
      models: gateway.registry.visibleTo(principalOf(request)).map((m) => tagOf(m, startedAt)),
    }),
  );

  r.get(
    '/api/ps',
    {
      config: call,
      schema: {
        tags,
        summary: 'Models that answered in the last five minutes (in this process)',
        response: withOllamaErrors({ 200: OllamaPsResponse }),
      },
    },
    async (request) => {
      const since = Date.now() - PS_WINDOW_MS;
      const models = gateway.registry
        .visibleTo(principalOf(request))
        .filter((m) => (gateway.recentlyUsed.get(m.name) ?? 0) > since)
        .map((m) => ({
          ...tagOf(m, startedAt),
          expires_at: new Date((gateway.recentlyUsed.get(m.name) ?? 0) + PS_WINDOW_MS).toISOString(),
          size_vram: 0,
        }));
      return { models };
    },
  );

  r.post(
    '/api/show',
    {
      config: read,
      schema: {
        tags,
        summary: "A model's details: provider, context window, fallbacks, capabilities",
        body: OllamaShowBody,
        response: withOllamaErrors({ 200: OllamaShowResponse }),
      },
    },
    async (request) => {
      const name = request.body.model ?? request.body.name;
      if (!name)
        throw new AppError('VALIDATION_ERROR', 'Invalid body: model is required', {
          fields: [{ field: 'body.model', message: 'is required' }],
        });
      const model = gateway.registry.get(name, principalOf(request).accountId);
      return showOf(gateway.resolve(principalOf(request), name, model?.kind ?? 'chat'), startedAt);
    },
  );

  // Ollama answers its root with this text; tools that connect to "an Ollama server" (Open WebUI's
  // connection check, health probes) look for it. Public, as Ollama's: it tells nothing but that.
  r.get(
    '/',
    {
      config: { public: true },
      schema: {
        tags,
        summary: "Ollama's liveness text: `Ollama is running`",
        response: { 200: { type: 'string', description: 'text/plain' } },
      },
    },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send('Ollama is running'),
  );

  r.get(
    '/api/version',
    {
      config: call,
      schema: {
        tags,
        summary: 'The Ollama API version served',
        response: withOllamaErrors({ 200: OllamaVersionResponse }),
      },
    },
    async () => ({ version: OLLAMA_COMPAT_VERSION }),
  );
}
