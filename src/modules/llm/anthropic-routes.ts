import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConstraintStrategy, Handler, HTTPVersion } from 'find-my-way';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { type ErrorRenderer, errorBody, registerErrorFormat } from '../../core/http/error-handler.js';
import { ClientGone, sendBody, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import { AnthropicWriter, chatFromAnthropic, countTokens, sse } from './anthropic-format.js';
import {
  AnthropicCountTokensBody,
  AnthropicMessageResponse,
  AnthropicMessagesBody,
  AnthropicModel,
  AnthropicModelList,
  AnthropicModelsQuery,
  AnthropicTokenCount,
  withAnthropicErrors,
} from './anthropic-schemas.js';
import { type ChatSession, callContext, type Gateway } from './gateway.js';
import type { ConfiguredModel } from './model-file.js';

const tags = ['Language models: Anthropic API'];

/** Anthropic's error types by status (what its clients map to their error classes). */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
};

const anthropicType = (status: number) =>
  ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

/** Anthropic's error body (what its clients parse), with the platform's fields beside it. */
const renderAnthropicError: ErrorRenderer = (error, message, platform) => ({
  type: 'error',
  error: { type: anthropicType(error.status), message },
  ...platform,
});

const call = { auth: { service: 'llm' }, errorFormat: 'anthropic' } as const;
const read = { auth: { service: 'llm', operation: 'read' }, errorFormat: 'anthropic' } as const;

/**
 * `GET /v1/models` is OpenAI's; an Anthropic client sends `anthropic-version` with every call, and
 * with that header the same path answers in Anthropic's list shape (a route constraint, so the
 * OpenAI route stays as it is and requests without the header never see this one).
 */
const ANTHROPIC_CLIENT = 'anthropicClient';
const anthropicClientStrategy: ConstraintStrategy<HTTPVersion.V1, string> = {
  name: ANTHROPIC_CLIENT,
  mustMatchWhenDerived: false,
  storage() {
    const handlers = new Map<string, Handler<HTTPVersion.V1>>();
    return {
      get: (value: string) => handlers.get(value) ?? null,
      set: (value: string, store: Handler<HTTPVersion.V1>) => {
        handlers.set(value, store);
      },
    };
  },
  deriveConstraint: (request) => (request.headers['anthropic-version'] === undefined ? '' : 'yes'),
};

/** Anthropic requires the header on every call; a missing one is its 400, so clients learn it here too. */
function requireVersion(request: FastifyRequest): void {
  const version = request.headers['anthropic-version'];
  if (typeof version !== 'string' || version === '')
    throw new AppError('VALIDATION_ERROR', 'anthropic-version: header is required', {
      fields: [{ field: 'headers.anthropic-version', message: 'is required' }],
    });
}

/** Server-sent events; a failure after the first byte is an `error` event, then the stream ends. */
async function* events(
  session: ChatSession,
  writer: AnthropicWriter,
  requestId: string,
): AsyncGenerator<string> {
  yield writer.start().join('');
  try {
    for await (const event of session.events) {
      const frames = writer.events(event);
      if (frames.length) yield frames.join('');
    }
  } catch (error) {
    const appError =
      error instanceof AppError ? error : new AppError('UPSTREAM_ERROR', 'the model failed mid-answer');
    yield sse('error', errorBody('anthropic', appError, requestId));
  }
}

const modelView = (model: ConfiguredModel, createdAt: string) => ({
  type: 'model' as const,
  id: model.name,
  display_name: model.name,
  created_at: createdAt,
});

export function anthropicRoutes(
  app: FastifyInstance,
  gateway: Gateway,
  settings: { startedAt: string; bodyLimit: number },
): void {
  registerErrorFormat('anthropic', renderAnthropicError, { schemaName: 'AnthropicError' });
  if (!app.hasConstraintStrategy(ANTHROPIC_CLIENT)) app.addConstraintStrategy(anthropicClientStrategy);
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const contextOf = (request: FastifyRequest, reply: FastifyReply, endpoint: string, stream: boolean) =>
    callContext(principalOf(request), endpoint, stream, new ClientGone(reply));

  r.post(
    '/v1/messages',
    {
      config: call,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary: 'Anthropic Messages API (server-sent events with stream: true)',
        body: AnthropicMessagesBody,
        response: withAnthropicErrors({ 200: AnthropicMessageResponse }),
      },
    },
    async (request, reply) => {
      requireVersion(request);
      const body = request.body;
      const stream = body.stream === true;
      if (stream) holdStreamSlot(request, reply);
      const ctx = contextOf(request, reply, 'messages', stream);
      const session = await gateway.chat(ctx, body.model, chatFromAnthropic(body));
      reply.headers(session.headers);
      const writer = new AnthropicWriter(session.model);
      if (stream)
        return sendLines(reply, 'text/event-stream; charset=utf-8', events(session, writer, request.id));
      for await (const event of session.events) {
        const whole = writer.collect(event);
        if (whole) return sendBody(reply, whole);
      }
      throw new AppError('UPSTREAM_ERROR', 'the model ended its answer without finishing');
    },
  );

  r.post(
    '/v1/messages/count_tokens',
    {
      config: read,
      bodyLimit: settings.bodyLimit,
      schema: {
        tags,
        summary: "The prompt's tokens (the gateway's estimate, about four characters a token)",
        body: AnthropicCountTokensBody,
        response: withAnthropicErrors({ 200: AnthropicTokenCount }),
      },
    },
    async (request) => {
      requireVersion(request);
      gateway.resolve(principalOf(request), request.body.model, 'chat');
      return { input_tokens: countTokens(request.body) };
    },
  );

  // The constrained twins of OpenAI's model routes (hidden from the OpenAPI document, which has one
  // operation per path and method: docs/llm.md describes them).
  r.get(
    '/v1/models',
    {
      config: read,
      constraints: { [ANTHROPIC_CLIENT]: 'yes' },
      schema: {
        hide: true,
        querystring: AnthropicModelsQuery,
        response: withAnthropicErrors({ 200: AnthropicModelList }),
      },
    },
    async (request) => {
      const all = gateway.registry.visibleTo(principalOf(request));
      const { limit = 20, after_id: after, before_id: before } = request.query;
      let start = 0;
      let end = all.length;
      if (after !== undefined) start = all.findIndex((m) => m.name === after) + 1;
      if (before !== undefined) {
        const at = all.findIndex((m) => m.name === before);
        end = at === -1 ? all.length : at;
        start = Math.max(start, end - limit);
      }
      const page = all.slice(start, Math.min(end, start + limit));
      return {
        data: page.map((m) => modelView(m, settings.startedAt)),
        has_more: before !== undefined ? start > 0 : start + page.length < end,
        first_id: page[0]?.name ?? null,
        last_id: page.at(-1)?.name ?? null,
      };
    },
  );

  r.get(
    '/v1/models/*',
    {
      config: read,
      constraints: { [ANTHROPIC_CLIENT]: 'yes' },
      schema: {
        hide: true,
        params: Type.Object({ '*': Type.String({ minLength: 1, maxLength: 200 }) }),
        response: withAnthropicErrors({ 200: AnthropicModel }),
      },
    },
    async (request) => {
      const name = request.params['*'];
      const model = gateway.registry.get(name, principalOf(request).accountId);
      return modelView(
        gateway.resolve(principalOf(request), name, model?.kind ?? 'chat'),
        settings.startedAt,
      );
    },
  );
}
