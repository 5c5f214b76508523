import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { hasScope } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { IdParams, ListEnvelope, listQueryOf, withErrors } from '../../core/http/schemas.js';
import {
  CredentialDataSchema,
  CredentialPatchBody,
  CredentialShareBody,
  CredentialSharesView,
  CredentialTestView,
  CredentialTransferBody,
  CredentialTypeParams,
} from './credentials/n8n-schemas.js';
import { CREDENTIAL_LIST_SPEC, type CredentialService } from './credentials/service.js';
import type { WorkflowService } from './definitions/service.js';
import type { ManualRunner } from './executions/manual-run.js';
import {
  ExecutionDetail,
  ExecutionGetQuery,
  ExecutionListItem,
  ExecutionListQuery,
  NoQuery,
  StopManyBody,
  StopManyView,
} from './executions/n8n-schemas.js';
import type { ExecutionService } from './executions/service.js';
import {
  ActivationView,
  CredentialBody,
  CredentialView,
  DeletedView,
  ExecutionEntry,
  ManualRunBodySchema,
  TestListenView,
  WorkflowBody,
  WorkflowHistoryQuery,
  WorkflowListEntry,
  WorkflowListQuery,
  WorkflowVersionListItem,
  WorkflowVersionParams,
  WorkflowVersionView,
  WorkflowView,
} from './schemas.js';

/** The workflow API: the per-endpoint window applies (README), besides the key's daily quota. */
const workflow = { auth: { service: 'workflow', endpointLimit: true } } as const;
/** Actions take no input; an empty object (or no body) is accepted. */
const NoBody = Type.Object({}, { additionalProperties: false });
const tags = ['Workflows'];
const executionTags = ['Executions'];
const credentialTags = ['Credentials'];

export interface WorkflowRouteDeps {
  workflows: WorkflowService;
  executions: ExecutionService;
  credentials: CredentialService;
  manual: ManualRunner;
  /** Whether `key:<id>` / `member:<id>` is a principal of the account (what credentials are shared with). */
  knownPrincipal(accountId: string, actor: string): Promise<boolean>;
}

function accountOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new Error('auth hook did not run');
  return principal.accountId;
}

/**
 * Whether the caller is the specification's own client: its key came in `X-WORKFLOW-API-KEY` (and no
 * `Authorization` header took precedence). Those callers get the specification's shapes (workflow list
 * entries with five fields, execution detail with its data); n8n's clients (`X-N8N-API-KEY`) and the
 * platform's own headers get n8n's (docs/decisions.md, "Two readings of /api/v1").
 */
function specCaller(request: FastifyRequest): boolean {
  return request.headers.authorization === undefined && request.headers['x-workflow-api-key'] !== undefined;
}

/** The specification's workflow list entry: id, name, active, createdAt, updatedAt, unless `fields` asks otherwise. */
const SPEC_LIST_FIELDS = 'id,name,active,createdAt,updatedAt';

/** May act on executions (workflow:write): sees resume URLs, which are the power to approve. */
function canAct(request: FastifyRequest): boolean {
  return request.principal !== null && hasScope(request.principal, 'workflow', 'write');
}

/** The workflow automation API (n8n's public API shape). Webhooks are in webhook-routes.ts. */
export function workflowRoutes(app: FastifyInstance, deps: WorkflowRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { workflows, executions, credentials, manual } = deps;

  r.get(
    '/api/v1/workflows',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'List workflows',
        querystring: WorkflowListQuery,
        response: withErrors({ 200: ListEnvelope(WorkflowListEntry) }),
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      const specShape = specCaller(request) && query.fields === undefined;
      return workflows.list(accountOf(request), specShape ? { ...query, fields: SPEC_LIST_FIELDS } : query);
    },
  );

  r.post(
    '/api/v1/workflows',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Create a workflow (inactive)',
        querystring: NoQuery,
        body: WorkflowBody,
        response: withErrors({ 201: WorkflowView }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return workflows.create(accountOf(request), request.body, undefined, request.principal);
    },
  );

  r.get(
    '/api/v1/workflows/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'A workflow with nodes and connections',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: WorkflowView }),
      },
    },
    async (request) => workflows.get(accountOf(request), request.params.id),
  );

  r.put(
    '/api/v1/workflows/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Replace a workflow (an active one re-registers its webhooks)',
        params: IdParams,
        querystring: NoQuery,
        body: WorkflowBody,
        response: withErrors({ 200: WorkflowView }),
      },
    },
    async (request) =>
      workflows.replace(accountOf(request), request.params.id, request.body, request.principal),
  );

  r.delete(
    '/api/v1/workflows/:id',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Delete a workflow and its executions',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: WorkflowView }),
      },
    },
    async (request) => workflows.delete(accountOf(request), request.params.id),
  );

  r.get(
    '/api/v1/workflows/:id/history',
    {
      config: workflow,
      schema: {
        tags,
        summary: "The workflow's saved versions, newest first (n8n's workflow history)",
        params: IdParams,
        querystring: WorkflowHistoryQuery,
        response: withErrors({ 200: Type.Array(WorkflowVersionListItem) }),
      },
    },
    async (request) => workflows.history(accountOf(request), request.params.id, request.query),
  );

  r.get(
    '/api/v1/workflows/:id/:versionId',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'One saved version of the workflow, by its versionId',
        description:
          "n8n's `versionId` (each save has one), or the platform's version number for versions saved before versionIds were kept.",
        params: WorkflowVersionParams,
        querystring: NoQuery,
        response: withErrors({ 200: WorkflowVersionView }),
      },
    },
    async (request) => workflows.version(accountOf(request), request.params.id, request.params.versionId),
  );

  for (const action of ['archive', 'unarchive'] as const) {
    r.post(
      `/api/v1/workflows/:id/${action}`,
      {
        config:
          action === 'archive'
            ? { auth: { service: 'workflow', operation: 'delete', endpointLimit: true } }
            : workflow,
        schema: {
          tags,
          summary:
            action === 'archive'
              ? "Archive (n8n's soft delete): deactivate it; it is not changed, activated or run until unarchived"
              : 'Unarchive (it stays inactive)',
          description:
            action === 'archive'
              ? 'Needs `workflow:delete`, as n8n. Archiving an archived workflow answers it as is.'
              : undefined,
          params: IdParams,
          querystring: NoQuery,
          body: NoBody,
          response: withErrors({ 200: WorkflowView }),
        },
      },
      async (request) =>
        action === 'archive'
          ? workflows.archive(accountOf(request), request.params.id)
          : workflows.unarchive(accountOf(request), request.params.id),
    );
  }

  for (const action of ['activate', 'deactivate'] as const) {
    r.post(
      `/api/v1/workflows/:id/${action}`,
      {
        config: workflow,
        schema: {
          tags,
          summary:
            action === 'activate' ? 'Activate: register its webhooks' : 'Deactivate: release its webhooks',
          params: IdParams,
          querystring: NoQuery,
          body: NoBody,
          response: withErrors({ 200: ActivationView }),
        },
      },
      async (request) =>
        action === 'activate'
          ? workflows.activate(accountOf(request), request.params.id)
          : workflows.deactivate(accountOf(request), request.params.id),
    );
  }

  r.post(
    '/api/v1/workflows/:id/publish',
    {
      config: workflow,
      schema: {
        tags,
        summary: "Publish (n8n 2's name for activate): register its webhooks",
        description:
          'n8n 2: `versionId` may name the version to publish; the platform publishes its current version, so another versionId is a 400 (save that version first: `GET /api/v1/workflows/{id}/{versionId}`, then PUT it). `name` and `description` of the version are accepted and not kept.',
        params: IdParams,
        querystring: NoQuery,
        body: Type.Object(
          {
            versionId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            name: Type.Optional(Type.String({ maxLength: 1000 })),
            description: Type.Optional(Type.String({ maxLength: 10_000 })),
          },
          { additionalProperties: false },
        ),
        response: withErrors({ 200: ActivationView }),
      },
    },
    async (request) => {
      const accountId = accountOf(request);
      const wanted = request.body?.versionId;
      if (wanted !== undefined) {
        const current = await workflows.get(accountId, request.params.id);
        if (wanted !== current.versionId) {
          throw new AppError(
            'VALIDATION_ERROR',
            `Only the current version (${current.versionId}) can be published; save version ${wanted} first`,
            { field: 'versionId', currentVersionId: current.versionId },
          );
        }
      }
      return workflows.activate(accountId, request.params.id);
    },
  );

  r.post(
    '/api/v1/workflows/:id/unpublish',
    {
      config: workflow,
      schema: {
        tags,
        summary: "Unpublish (n8n 2's name for deactivate): release its webhooks",
        params: IdParams,
        querystring: NoQuery,
        body: NoBody,
        response: withErrors({ 200: ActivationView }),
      },
    },
    async (request) => workflows.deactivate(accountOf(request), request.params.id),
  );

  r.post(
    '/api/v1/workflows/:id/listen',
    {
      config: workflow,
      schema: {
        tags,
        summary: "Make the workflow's webhooks answer at /webhook-test/{path} for one call (active or not)",
        description:
          "n8n's test webhooks: the next call of one of them runs the current version with mode `test`, then they stop listening; unused ones stop after TEST_WEBHOOK_SECONDS. Listening again restarts the window.",
        params: IdParams,
        querystring: NoQuery,
        body: NoBody,
        response: withErrors({ 200: TestListenView }),
      },
    },
    async (request) => workflows.listen(accountOf(request), request.params.id),
  );

  r.post(
    '/api/v1/workflows/:id/run',
    {
      config: workflow,
      schema: {
        tags,
        summary: 'Run the workflow now (manual mode, active or not), waiting for its end',
        description:
          "n8n's manual run: from the trigger or `startNode`, with pinned data standing in for the nodes it names. 200 with the execution and its data once it ended; 202 with the execution while it still runs after MANUAL_RUN_WAIT_MS (poll `GET /api/v1/executions/{id}`).",
        params: IdParams,
        querystring: NoQuery,
        body: ManualRunBodySchema,
        response: withErrors({ 200: ExecutionDetail, 202: ExecutionDetail }),
      },
    },
    async (request, reply) => {
      const { ended, execution } = await manual.run(
        accountOf(request),
        request.params.id,
        request.body,
        request.principal,
      );
      return reply.code(ended ? 200 : 202).send(execution);
    },
  );

  r.get(
    '/api/v1/executions',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary: 'List executions, newest first (with `includeData`, each with its run data)',
        querystring: ExecutionListQuery,
        response: withErrors({ 200: ListEnvelope(ExecutionListItem) }),
      },
    },
    async (request) => executions.list(accountOf(request), request.query, canAct(request)),
  );

  r.get(
    '/api/v1/executions/:id',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary:
          'An execution; with `includeData`, the workflow as it ran and the run data (n8n’s structure)',
        params: IdParams,
        querystring: ExecutionGetQuery,
        response: withErrors({ 200: ExecutionDetail }),
      },
    },
    async (request) =>
      executions.get(accountOf(request), request.params.id, {
        includeData: request.query.includeData ?? specCaller(request),
        withResumeUrl: canAct(request),
      }),
  );

  r.delete(
    '/api/v1/executions/:id',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary: 'Delete an execution',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: DeletedView }),
      },
    },
    async (request) => executions.delete(accountOf(request), request.params.id),
  );

  r.post(
    '/api/v1/executions/stop',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary: 'Stop every execution of the account that matches (n8n’s bulk stop)',
        description:
          'Executions in one of `status` (`queued`, `running`, `waiting`) that have not ended, of `workflowId` ' +
          'and started after `startedAfter` / before `startedBefore` when given, become canceled. Answers ' +
          '`{stopped}`, how many this call stopped.',
        querystring: NoQuery,
        body: StopManyBody,
        response: withErrors({ 200: StopManyView }),
      },
    },
    async (request) => executions.stopMany(accountOf(request), request.body),
  );

  r.post(
    '/api/v1/executions/:id/stop',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary: 'Stop an execution that has not ended (queued, running or waiting): it becomes canceled',
        params: IdParams,
        querystring: NoQuery,
        body: NoBody,
        response: withErrors({ 200: ExecutionEntry }),
      },
    },
    async (request) => executions.stop(accountOf(request), request.params.id),
  );

  r.post(
    '/api/v1/executions/:id/retry',
    {
      config: workflow,
      schema: {
        tags: executionTags,
        summary: 'Retry a failed execution (a new execution, mode retry)',
        params: IdParams,
        querystring: NoQuery,
        body: NoBody,
        response: withErrors({ 201: ExecutionEntry }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return executions.retry(accountOf(request), request.params.id);
    },
  );

  r.post(
    '/api/v1/credentials',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Store a credential (encrypted; never shown again)',
        querystring: NoQuery,
        body: CredentialBody,
        response: withErrors({ 201: CredentialView }),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return credentials.create(accountOf(request), request.body, request.principal);
    },
  );

  r.get(
    '/api/v1/credentials',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'List credentials (no secrets)',
        querystring: listQueryOf(CREDENTIAL_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(CredentialView) }),
      },
    },
    async (request) => credentials.list(accountOf(request), request.query),
  );

  r.get(
    '/api/v1/credentials/:id',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'A credential (no secret)',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: CredentialView }),
      },
    },
    async (request) => credentials.get(accountOf(request), request.params.id),
  );

  r.post(
    '/api/v1/credentials/:id/test',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Test a credential: connect with it and run a trivial query or PING (n8n’s test)',
        description:
          'Answers n8n’s `{status, message}`: OK when the server answered, else Error and why. Tests ' +
          'postgres, mySql, redis, ftp, sftp, smtp, imap and aws credentials (aws: STS GetCallerIdentity, ' +
          'or ListBuckets on an S3-compatible endpoint), through the outbound-address guard; anyone who ' +
          'may read the credential may test it.',
        params: IdParams,
        querystring: NoQuery,
        body: NoBody,
        response: withErrors({ 200: CredentialTestView }),
      },
    },
    async (request) => credentials.test(accountOf(request), request.params.id),
  );

  r.patch(
    '/api/v1/credentials/:id',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Change a credential’s name and/or data (sealed again; the type stays)',
        params: IdParams,
        querystring: NoQuery,
        body: CredentialPatchBody,
        response: withErrors({ 200: CredentialView }),
      },
    },
    async (request) =>
      credentials.update(accountOf(request), request.params.id, request.body, request.principal),
  );

  r.get(
    '/api/v1/credentials/schema/:type',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'The JSON schema of a credential type’s data (n8n’s answer); an unsupported type is a 404',
        params: CredentialTypeParams,
        querystring: NoQuery,
        response: withErrors({ 200: CredentialDataSchema }),
      },
    },
    async (request) => credentials.schemaOf(request.params.type),
  );

  r.delete(
    '/api/v1/credentials/:id',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Delete a credential',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: CredentialView }),
      },
    },
    async (request) => credentials.delete(accountOf(request), request.params.id, request.principal),
  );

  r.put(
    '/api/v1/credentials/:id/share',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Share a credential with keys or members of the account (n8n’s share; replaces the list)',
        description:
          'The workflows these principals save may use the credential. Only its owner, or a key with ' +
          'credentials:use (Admin), may share it. An empty list withdraws every share.',
        params: IdParams,
        querystring: NoQuery,
        body: CredentialShareBody,
        response: withErrors({ 200: CredentialSharesView }),
      },
    },
    async (request) =>
      credentials.share(
        accountOf(request),
        request.params.id,
        request.body.shareWithIds,
        request.principal,
        deps.knownPrincipal,
      ),
  );

  r.get(
    '/api/v1/credentials/:id/share',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Whom a credential is shared with',
        params: IdParams,
        querystring: NoQuery,
        response: withErrors({ 200: CredentialSharesView }),
      },
    },
    async (request) => {
      const shown = await credentials.get(accountOf(request), request.params.id);
      const sharedWith = await credentials.sharedWith(accountOf(request), request.params.id);
      return { id: shown.id, owner: shown.owner, sharedWith };
    },
  );

  r.put(
    '/api/v1/credentials/:id/transfer',
    {
      config: workflow,
      schema: {
        tags: credentialTags,
        summary: 'Give a credential to another owner (n8n’s transfer)',
        params: IdParams,
        querystring: NoQuery,
        body: CredentialTransferBody,
        response: withErrors({ 200: CredentialView }),
      },
    },
    async (request) =>
      credentials.transfer(
        accountOf(request),
        request.params.id,
        request.body.destinationProjectId,
        request.principal,
        deps.knownPrincipal,
      ),
  );
}
