import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { withErrors } from '../../../core/http/schemas.js';
import {
  ProjectList,
  ProjectListQuery,
  UserGetQuery,
  UserList,
  UserListQuery,
  UserParams,
  UserView,
} from './schemas.js';
import type { PeopleService } from './service.js';

/** Members' emails and the account's keys: admins only (n8n: the owner's user:list). */
const admin = { auth: { service: 'workflow', operation: 'admin', endpointLimit: true } } as const;

function accountOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (!principal) throw new Error('auth hook did not run');
  return principal.accountId;
}

/** n8n's `GET /users`, `GET /users/{id}` and `GET /projects`, read from the account's principals. */
export function peopleRoutes(app: FastifyInstance, service: PeopleService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/api/v1/users',
    {
      config: admin,
      schema: {
        tags: ['Users'],
        summary: "The account's portal members, as n8n's users",
        description:
          '`limit` (100, max 250), `cursor`, `includeRole` (n8n’s global role, and the portal role in `portalRole`). Needs `workflow:admin`.',
        querystring: UserListQuery,
        response: withErrors({ 200: UserList }),
      },
    },
    async (request) => service.users(accountOf(request), request.query),
  );

  r.get(
    '/api/v1/users/:id',
    {
      config: admin,
      schema: {
        tags: ['Users'],
        summary: 'One portal member of the account, by id or email',
        params: UserParams,
        querystring: UserGetQuery,
        response: withErrors({ 200: UserView }),
      },
    },
    async (request) =>
      service.user(accountOf(request), request.params.id, request.query.includeRole === true),
  );

  r.get(
    '/api/v1/projects',
    {
      config: admin,
      schema: {
        tags: ['Projects'],
        summary: "The account's principals, as n8n's projects",
        description:
          'The account (`account`, type `team`) and each portal member (`member:<id>`) and active API key (`key:<id>`), type `personal`: what a credential can be transferred to (`destinationProjectId`). Needs `workflow:admin`.',
        querystring: ProjectListQuery,
        response: withErrors({ 200: ProjectList }),
      },
    },
    async (request) => service.projects(accountOf(request), request.query),
  );
}
