import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../core/auth/principal.js';
import { IdParams, ListEnvelope, listQueryOf, withErrors } from '../../core/http/schemas.js';
import type { CustomerTokens } from './customer-tokens.js';
import { KEY_LIST_SPEC, type KeyService } from './key-service.js';
import {
  ApiKeyView,
  ApiKeyWithSecret,
  CreateKeyBody,
  createTokenBodyFor,
  RotateKeyBody,
  TokenView,
  UpdateKeyBody,
  UsageQuery,
  UsageView,
} from './schemas.js';
import type { UsageLedger } from './usage.js';

const admin = { service: 'core', operation: 'admin' } as const;
const tags = ['Core: API keys'];

function caller(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('auth hook did not run');
  return request.principal;
}

export function authRoutes(
  app: FastifyInstance,
  deps: { keys: KeyService; tokens: CustomerTokens; usage: UsageLedger },
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { keys, tokens, usage } = deps;

  r.post(
    '/v1/api-keys',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'Create an API key (value shown once)',
        body: CreateKeyBody,
        response: withErrors({ 201: ApiKeyWithSecret }),
      },
    },
    async (request, reply) => {
      const p = caller(request);
      reply.code(201);
      return keys.create(p.accountId, request.body, p);
    },
  );

  r.get(
    '/v1/api-keys',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'List API keys',
        querystring: listQueryOf(KEY_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(ApiKeyView) }),
      },
    },
    async (request) => keys.list(caller(request).accountId, request.query),
  );

  r.get(
    '/v1/api-keys/:id',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'Get an API key',
        params: IdParams,
        response: withErrors({ 200: ApiKeyView }),
      },
    },
    async (request) => keys.get(caller(request).accountId, request.params.id),
  );

  r.patch(
    '/v1/api-keys/:id',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'Change name, role, scopes, services, allowed IPs, quota, models or token budget',
        params: IdParams,
        body: UpdateKeyBody,
        response: withErrors({ 200: ApiKeyView }),
      },
    },
    async (request) => {
      const p = caller(request);
      return keys.update(p.accountId, request.params.id, request.body, p);
    },
  );

  r.delete(
    '/v1/api-keys/:id',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'Revoke an API key',
        params: IdParams,
        response: withErrors({ 204: Type.Null({ description: 'Revoked' }) }),
      },
    },
    async (request, reply) => {
      const p = caller(request);
      await keys.revoke(p.accountId, request.params.id, p);
      return reply.code(204).send(null);
    },
  );

  r.post(
    '/v1/api-keys/:id/rotate',
    {
      config: { auth: admin },
      schema: {
        tags,
        summary: 'Rotate: a new value, shown once; the old one works for gracePeriodSeconds',
        params: IdParams,
        body: RotateKeyBody,
        response: withErrors({ 200: ApiKeyWithSecret }),
      },
    },
    async (request) =>
      keys.rotate(
        caller(request).accountId,
        request.params.id,
        request.body.gracePeriodSeconds ?? 0,
        caller(request),
      ),
  );

  r.post(
    '/v1/auth/tokens',
    {
      // Any key may mint tokens for its own customers; the token can never exceed the key.
      config: { auth: { service: 'core', operation: 'read', principals: ['api_key'], anyService: true } },
      schema: {
        tags: ['Core: customer tokens'],
        summary: 'Mint a short-lived customer token (JWT) no broader than the calling key',
        body: createTokenBodyFor(tokens.maxTtlSeconds),
        response: withErrors({ 201: TokenView }),
      },
    },
    async (request, reply) => {
      const token = await tokens.mint(caller(request), request.body);
      reply.code(201);
      return token;
    },
  );

  r.get(
    '/v1/usage',
    {
      config: { auth: { service: 'core' } },
      schema: {
        tags: ['Core: usage'],
        summary: 'Requests per key, day and service',
        querystring: UsageQuery,
        response: withErrors({ 200: UsageView }),
      },
    },
    async (request) => {
      const p = caller(request);
      if (request.query.keyId) await keys.get(p.accountId, request.query.keyId);
      return usage.query(p.accountId, request.query);
    },
  );
}
