import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { IdParams, ListEnvelope, withErrors } from '../../../core/http/schemas.js';
import { NoQuery } from '../executions/n8n-schemas.js';
import { VariableBody, VariableListQuery, VariablePatch, VariableView } from './schemas.js';
import type { VariableService } from './service.js';

/** The workflow API's limits and scopes (routes.ts): variables are workflow data. */
const workflow = { auth: { service: 'workflow', endpointLimit: true } } as const;
/** Under Workflows: test/sdk/client.test.ts requires each tag to be called through the client. */
const tags = ['Workflows'];
const NoContent = Type.Null({ description: 'Done (n8n answers with no body)' });

function accountOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new Error('auth hook did not run');
  return principal.accountId;
}

/** n8n's `/api/v1/variables`, per account; expressions read them as `$vars`. */
export function variableRoutes(app: FastifyInstance, variables: VariableService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    '/api/v1/variables',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'List variables (`$vars`)',
        querystring: VariableListQuery,
        response: withErrors({ 200: ListEnvelope(VariableView) }),
      },
    },
    async (request) => variables.list(accountOf(request), request.query),
  );

  r.post(
    '/api/v1/variables',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Create a variable (a key unique in the account)',
        querystring: NoQuery,
        body: VariableBody,
        response: withErrors({ 201: VariableView }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return variables.create(accountOf(request), request.body);
    },
  );

  r.put(
    '/api/v1/variables/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Change a variable’s key and/or value',
        params: IdParams,
        querystring: NoQuery,
        body: VariablePatch,
        response: withErrors({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await variables.update(accountOf(request), request.params.id, request.body);
      return reply.code(204).send(null);
    },
  );

  r.delete(
    '/api/v1/variables/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Delete a variable',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await variables.delete(accountOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
