import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { hasScope, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { ListEnvelope, listQueryOf, Nullable, Timestamp, withErrors } from '../../core/http/schemas.js';
import { AUDIT_LIST_SPEC, type AuditLog } from './audit-log.js';
import { REQUEST_LOG_LIST_SPEC, type RequestLog } from './request-log.js';

const RequestLogView = Type.Object({
  id: Type.String(),
  requestId: Type.String({ description: 'The X-Request-Id of the call' }),
  method: Type.String(),
  path: Type.String({ description: 'The path as called, never with its query string' }),
  service: Nullable(Type.String()),
  status: Type.Integer(),
  latencyMs: Type.Integer(),
  keyId: Nullable(Type.String()),
  memberId: Nullable(Type.String({ description: 'The signed-in member, for a portal session' })),
  principalKind: Type.String({ description: 'api_key, customer_token or session' }),
  clientIp: Type.String(),
  userAgent: Nullable(Type.String()),
  createdAt: Timestamp,
});

const AuditEventView = Type.Object({
  id: Type.String(),
  action: Type.String({
    description: 'key.created, member.role_changed, session.created, workflow.activated…',
  }),
  actorType: Type.String({ description: 'api_key, session (a member) or customer_token' }),
  actorId: Nullable(Type.String({ description: "The key's or the member's id" })),
  targetType: Type.String(),
  targetId: Nullable(Type.String()),
  clientIp: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  requestId: Nullable(Type.String()),
  details: Type.Object({}, { additionalProperties: true, description: 'What changed; never a secret' }),
  createdAt: Timestamp,
});

/**
 * Keys need core:admin; a signed-in member of any role may read (the portal's viewers are there to
 * look); customer tokens never.
 */
const readers = {
  service: 'core',
  operation: ['read', 'admin'],
  principals: ['api_key', 'session'],
} as const;

function mayRead(principal: Principal): void {
  if (principal.kind === 'session') return;
  if (!hasScope(principal, 'core', 'admin'))
    throw new AppError('FORBIDDEN', 'Reading the logs needs the core:admin scope', {
      required: 'core:admin',
    });
}

const tags = ['Core: logs'];

export function activityRoutes(app: FastifyInstance, deps: { requests: RequestLog; audit: AuditLog }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/v1/request-logs',
    {
      config: { auth: readers },
      schema: {
        tags,
        summary: "The account's requests, newest first",
        description:
          'Authenticated calls of every service: method, path (without query string), status, latency, key or member, client address, request id. Filters: requestId, keyId, memberId, status, statusClass (2xx…5xx), method, service, from and to (ISO 8601; from inclusive, to exclusive). Rows are kept REQUEST_LOG_RETENTION_DAYS days. Keys need core:admin; any signed-in member may read.',
        querystring: listQueryOf(REQUEST_LOG_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(RequestLogView) }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      mayRead(principal);
      return deps.requests.list(principal.accountId, request.query as Record<string, unknown>);
    },
  );

  r.get(
    '/v1/audit-events',
    {
      config: { auth: readers },
      schema: {
        tags,
        summary: "The account's audit trail, newest first",
        description:
          'Keys created, edited, rotated and revoked; members invited, removed and their roles changed; sign-ins and ended sessions; credentials created, changed, shared and deleted; workflows activated and deactivated: who did it (actorType, actorId) and from where (clientIp). Filters: action, actorType, actorId, targetType, targetId, requestId, from, to. Keys need core:admin; any signed-in member may read.',
        querystring: listQueryOf(AUDIT_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(AuditEventView) }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      mayRead(principal);
      return deps.audit.list(principal.accountId, request.query as Record<string, unknown>);
    },
  );
}
