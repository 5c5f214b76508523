import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../core/http/auth-hook.js';
import { ListEnvelope, listQueryOf, Nullable, Timestamp, withErrors } from '../../core/http/schemas.js';
import { costUsd } from './pricing.js';
import type { ModelRegistry } from './registry.js';
import type { LlmRequestLog } from './request-log.js';
import { LIST_SPEC as LLM_REQUEST_LIST_SPEC, LLM_REQUEST_STATUSES } from './request-log.js';

const LlmRequestView = Type.Object({
  id: Type.String(),
  keyId: Nullable(Type.String()),
  endpoint: Type.String(),
  model: Type.String({ description: 'The model asked for' }),
  answeredBy: Nullable(Type.String({ description: 'The model that answered (a fallback, perhaps)' })),
  provider: Nullable(Type.String()),
  stream: Type.Boolean(),
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  tokensEstimated: Type.Boolean({ description: 'The upstream sent no counts; estimated from the text' }),
  latencyMs: Type.Integer(),
  ttftMs: Nullable(Type.Integer({ description: 'Time to the first token' })),
  status: Type.Enum(LLM_REQUEST_STATUSES),
  httpStatus: Type.Integer(),
  errorCode: Nullable(Type.String()),
  cached: Type.Boolean(),
  fallbacksTried: Type.Integer(),
  costUsd: Nullable(
    Type.Number({ description: "US dollars at the answering model's registry price; null without one" }),
  ),
  createdAt: Timestamp,
});

export function requestsRoutes(app: FastifyInstance, log: LlmRequestLog, registry: ModelRegistry): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/v1/llm/requests',
    {
      config: { auth: { service: 'llm' } },
      schema: {
        tags: ['Language models: usage'],
        summary: 'Recent model calls of the account, newest first (filters model, status, keyId, answeredBy)',
        querystring: listQueryOf(LLM_REQUEST_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(LlmRequestView) }),
      },
    },
    async (request) => {
      const accountId = principalOf(request).accountId;
      const page = await log.list(accountId, request.query as Record<string, unknown>);
      return {
        ...page,
        // A row projected by `fields` without its model or tokens gets no cost.
        data: page.data.map((row) => {
          const name = row.answeredBy ?? row.model;
          if (name === undefined || row.promptTokens === undefined || row.completionTokens === undefined)
            return row;
          return {
            ...row,
            costUsd: costUsd(registry.get(name, accountId)?.pricing, row.promptTokens, row.completionTokens),
          };
        }),
      };
    },
  );
}
