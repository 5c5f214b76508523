import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { IdParams, ListEnvelope, withErrors } from '../../../core/http/schemas.js';
import { NoQuery } from '../executions/n8n-schemas.js';
import type { ExecutionTagService } from './execution-tags.js';
import { TagBody, TagListQuery, TagView, WorkflowTagsBody } from './schemas.js';
import type { TagService } from './service.js';

/** The workflow API's limits and scopes (routes.ts): tags are workflow data. */
const workflow = { auth: { service: 'workflow', endpointLimit: true } } as const;
const tags = ['Workflows'];

function accountOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new Error('auth hook did not run');
  return principal.accountId;
}

/** n8n's `/api/v1/tags` and `/api/v1/workflows/{id}/tags`, per account. */
export function tagRoutes(
  app: FastifyInstance,
  service: TagService,
  executionTags: ExecutionTagService,
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    '/api/v1/tags',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'List tags',
        querystring: TagListQuery,
        response: withErrors({ 200: ListEnvelope(TagView) }),
      },
    },
    async (request) => service.list(accountOf(request), request.query),
  );

  r.post(
    '/api/v1/tags',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Create a tag (a name unique in the account)',
        querystring: NoQuery,
        body: TagBody,
        response: withErrors({ 201: TagView }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return service.create(accountOf(request), request.body);
    },
  );

  r.get(
    '/api/v1/tags/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Get a tag',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: TagView }),
      },
    },
    async (request) => service.get(accountOf(request), request.params.id),
  );

  r.put(
    '/api/v1/tags/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Rename a tag (in every workflow carrying it; the id follows the name)',
        params: IdParams,
        querystring: NoQuery,
        body: TagBody,
        response: withErrors({ 200: TagView }),
      },
    },
    async (request) => service.rename(accountOf(request), request.params.id, request.body),
  );

  r.delete(
    '/api/v1/tags/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Delete a tag (taken off every workflow)',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: TagView }),
      },
    },
    async (request) => service.delete(accountOf(request), request.params.id),
  );

  r.get(
    '/api/v1/workflows/:id/tags',
    {
      config: workflow,
      schema: {
        tags,
        summary: "A workflow's tags",
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: Type.Array(TagView) }),
      },
    },
    async (request) => service.workflowTags(accountOf(request), request.params.id),
  );

  r.put(
    '/api/v1/workflows/:id/tags',
    {
      config: workflow,
      schema: {
        tags,
        summary: "Set a workflow's tags (by id)",
        params: IdParams,
        querystring: NoQuery,
        body: WorkflowTagsBody,
        response: withErrors({ 200: Type.Array(TagView) }),
      },
    },
    async (request) => service.setWorkflowTags(accountOf(request), request.params.id, request.body),
  );

  r.get(
    '/api/v1/executions/:id/tags',
    {
      config: workflow,
      schema: {
        tags: ['Executions'],
        summary: "An execution's annotation tags (the account's tags)",
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: Type.Array(TagView) }),
      },
    },
    async (request) => executionTags.get(accountOf(request), request.params.id),
  );

  r.put(
    '/api/v1/executions/:id/tags',
    {
      config: workflow,
      schema: {
        tags: ['Executions'],
        summary: "Set an execution's annotation tags (by id; each a tag of the account)",
        params: IdParams,
        querystring: NoQuery,
        body: WorkflowTagsBody,
        response: withErrors({ 200: Type.Array(TagView) }),
      },
    },
    async (request) => executionTags.set(accountOf(request), request.params.id, request.body),
  );
}
