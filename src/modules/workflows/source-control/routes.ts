import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ErrorBody, withErrors } from '../../../core/http/schemas.js';
import { NoQuery } from '../executions/n8n-schemas.js';
import { PullBody, PushBody, PushView, SourceControlledFile } from './schemas.js';
import type { SourceControlService } from './service.js';

/** Pulling replaces workflows (with the operator's credential rights) and pushing publishes them: admins only. */
const admin = { auth: { service: 'core', operation: 'admin', endpointLimit: true } } as const;
const tags = ['Source control'];

function accountOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new Error('auth hook did not run');
  return principal.accountId;
}

/** n8n's `POST /api/v1/source-control/pull` and `…/push`. */
export function sourceControlRoutes(app: FastifyInstance, service: SourceControlService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    '/api/v1/source-control/pull',
    {
      config: admin,
      schema: {
        tags,
        summary: "Pull the account's workflows from the repository (n8n's environments)",
        description:
          'Imports every `workflows/<accountId>/<id>.json` of SOURCE_CONTROL_BRANCH that differs from the stored workflow (created or replaced; active state kept). Answers the files that changed. Needs `core:admin`.',
        querystring: NoQuery,
        body: PullBody,
        response: withErrors({ 200: Type.Array(SourceControlledFile) }),
      },
    },
    async (request) => service.pull(accountOf(request), request.principal ?? null),
  );

  r.post(
    '/api/v1/source-control/push',
    {
      config: admin,
      schema: {
        tags,
        summary: "Push workflows to the repository (n8n's environments)",
        description:
          'Writes the named workflows to `workflows/<accountId>/<id>.json`, commits with `commitMessage` and pushes to SOURCE_CONTROL_BRANCH. Answers `{data}`, the files that changed (none: no commit). Needs `core:admin`.',
        querystring: NoQuery,
        body: PushBody,
        // 404: a named workflow is not the account's.
        response: withErrors({ 200: PushView, 404: ErrorBody }),
      },
    },
    async (request) => ({
      data: await service.push(
        accountOf(request),
        request.body.fileNames.map((f) => f.id),
        request.body.commitMessage,
      ),
    }),
  );
}
