import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { hasScope, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { ListEnvelope, listQueryOf, Nullable, Timestamp, withErrors } from '../../core/http/schemas.js';
import { instant } from '../../core/http/time-range.js';
import { AUDIT_LIST_SPEC, type AuditLog } from './audit-log.js';
import { REQUEST_LOG_LIST_SPEC, type RequestLog } from './request-log.js';

const RequestLogView = Type.Object({
  id: Type.String(),
  requestId: Type.String({ description: 'The X-Request-Id of the call' }),
  method: Type.String(),
  path: Type.String({ description: 'The path as called, never with its query string' }),
  route: Nullable(Type.String({ description: 'The route it matched (`/api/v1/workflows/:id`)' })),
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

const Percentiles = Type.Object({ p50: Type.Integer(), p95: Type.Integer(), p99: Type.Integer() });
const SummaryQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ description: 'ISO 8601 date or date-time, inclusive (default: 7 days ago)' }),
    ),
    to: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time, exclusive (default: now)' })),
    keyId: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const SummaryView = Type.Object({
  from: Timestamp,
  to: Timestamp,
  requests: Type.Integer(),
  latencyMs: Percentiles,
  byEndpoint: Type.Array(
    Type.Object({
      method: Type.String(),
      route: Type.String(),
      requests: Type.Integer(),
      errors: Type.Integer({ description: 'Answers with a status of 400 or more' }),
      latencyMs: Percentiles,
    }),
  ),
  byStatus: Type.Array(Type.Object({ status: Type.Integer(), requests: Type.Integer() })),
});
const DAY_MS = 86_400_000;

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
    '/v1/request-logs/summary',
    {
      config: { auth: readers },
      schema: {
        tags,
        summary: 'Requests, errors and latency percentiles per endpoint and per status over a time range',
        description:
          'From the request log (so within REQUEST_LOG_RETENTION_DAYS): per route pattern and method, the count, the errors and p50/p95/p99 latency; per status, the count. At most 366 days. Keys need core:admin; any signed-in member may read.',
        querystring: SummaryQuery,
        response: withErrors({ 200: SummaryView }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      mayRead(principal);
      const now = deps.requests.nowMs();
      // Default: up to and including this millisecond.
      const to = instant('to', request.query.to) ?? new Date(now + 1).toISOString();
      const from = instant('from', request.query.from) ?? new Date(Date.parse(to) - 7 * DAY_MS).toISOString();
      const span = Date.parse(to) - Date.parse(from);
      if (span < 0 || span > 366 * DAY_MS)
        throw new AppError('VALIDATION_ERROR', 'The range must run forward and span at most 366 days', {
          fields: [{ field: 'from', message: 'must be before to, at most 366 days before' }],
        });
      return deps.requests.summary(principal.accountId, { from, to, keyId: request.query.keyId });
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
