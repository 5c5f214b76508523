import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { AuditEvent, AuditLog } from './audit-log.js';

/** How a successful call of one route is written to the audit trail. */
interface AuditRule {
  action: string;
  targetType: string;
  /** Where the target's id is: the `:id` parameter, the `id` of the answer, or nowhere. */
  target: 'param' | 'response' | 'none';
  /** What changed, from the validated body: names and roles, never values that could be secrets. */
  details?: (body: Record<string, unknown>) => Record<string, unknown>;
}

const fieldNames = (body: Record<string, unknown>) => ({ fields: Object.keys(body).sort() });
const pick =
  (...names: string[]) =>
  (body: Record<string, unknown>) =>
    Object.fromEntries(names.filter((n) => body[n] !== undefined).map((n) => [n, body[n]]));

/**
 * The routes whose success is a security-relevant change, by `METHOD url` as registered. Kept in one
 * place, so the modules that own them stay unaware of the trail; a route renamed there without this
 * table following is caught by the audit tests.
 */
export const AUDITED_ROUTES: Readonly<Record<string, AuditRule>> = {
  'POST /v1/api-keys': {
    action: 'key.created',
    targetType: 'api_key',
    target: 'response',
    details: pick('name', 'type', 'role', 'services'),
  },
  'PATCH /v1/api-keys/:id': {
    action: 'key.updated',
    targetType: 'api_key',
    target: 'param',
    details: fieldNames,
  },
  'DELETE /v1/api-keys/:id': { action: 'key.revoked', targetType: 'api_key', target: 'param' },
  'POST /v1/api-keys/:id/rotate': {
    action: 'key.rotated',
    targetType: 'api_key',
    target: 'param',
    details: pick('gracePeriodSeconds'),
  },
  'POST /v1/members/invites': {
    action: 'member.invited',
    targetType: 'member',
    target: 'none',
    details: pick('email', 'role'),
  },
  'PATCH /v1/members/:id': {
    action: 'member.role_changed',
    targetType: 'member',
    target: 'param',
    details: pick('role'),
  },
  'DELETE /v1/members/:id': { action: 'member.removed', targetType: 'member', target: 'param' },
  'POST /v1/auth/logout': { action: 'session.ended', targetType: 'session', target: 'none' },
  'DELETE /v1/auth/sessions/:id': { action: 'session.revoked', targetType: 'session', target: 'param' },
  'POST /api/v1/credentials': {
    action: 'credential.created',
    targetType: 'credential',
    target: 'response',
    details: pick('name', 'type'),
  },
  'PATCH /api/v1/credentials/:id': {
    action: 'credential.updated',
    targetType: 'credential',
    target: 'param',
    details: fieldNames,
  },
  'DELETE /api/v1/credentials/:id': {
    action: 'credential.deleted',
    targetType: 'credential',
    target: 'param',
  },
  // Starting an OAuth2 consent: who asked to connect which credential to a provider account.
  'POST /api/v1/credentials/:id/oauth2/authorize': {
    action: 'credential.oauth2_consent_started',
    targetType: 'credential',
    target: 'param',
  },
  'PUT /api/v1/credentials/:id/share': {
    action: 'credential.shared',
    targetType: 'credential',
    target: 'param',
    details: pick('shareWithIds'),
  },
  'POST /api/v1/workflows/:id/activate': {
    action: 'workflow.activated',
    targetType: 'workflow',
    target: 'param',
  },
  'POST /api/v1/workflows/:id/deactivate': {
    action: 'workflow.deactivated',
    targetType: 'workflow',
    target: 'param',
  },
  // n8n 2's names for the same change, and archiving (which deactivates).
  'POST /api/v1/workflows/:id/publish': {
    action: 'workflow.activated',
    targetType: 'workflow',
    target: 'param',
  },
  'POST /api/v1/workflows/:id/unpublish': {
    action: 'workflow.deactivated',
    targetType: 'workflow',
    target: 'param',
  },
  'POST /api/v1/workflows/:id/archive': {
    action: 'workflow.archived',
    targetType: 'workflow',
    target: 'param',
  },
  'POST /api/v1/workflows/:id/unarchive': {
    action: 'workflow.unarchived',
    targetType: 'workflow',
    target: 'param',
  },
  // What runs, with whose credential rights (a workflow acts as whoever saved it last), and the
  // records of what ran: changes an investigation needs to see.
  'POST /api/v1/workflows': {
    action: 'workflow.created',
    targetType: 'workflow',
    target: 'response',
    details: pick('name'),
  },
  'PUT /api/v1/workflows/:id': {
    action: 'workflow.updated',
    targetType: 'workflow',
    target: 'param',
    details: fieldNames,
  },
  'DELETE /api/v1/workflows/:id': { action: 'workflow.deleted', targetType: 'workflow', target: 'param' },
  'DELETE /api/v1/executions/:id': { action: 'execution.deleted', targetType: 'execution', target: 'param' },
  // Variables feed every run's expressions (`$vars`); their values are never written here.
  'POST /api/v1/variables': {
    action: 'variable.created',
    targetType: 'variable',
    target: 'response',
    details: pick('key'),
  },
  'PUT /api/v1/variables/:id': {
    action: 'variable.updated',
    targetType: 'variable',
    target: 'param',
    details: fieldNames,
  },
  'DELETE /api/v1/variables/:id': { action: 'variable.deleted', targetType: 'variable', target: 'param' },
  // Pulling replaces workflows from a repository; pushing publishes them there.
  'POST /api/v1/source-control/pull': {
    action: 'source_control.pulled',
    targetType: 'repository',
    target: 'none',
  },
  'POST /api/v1/source-control/push': {
    action: 'source_control.pushed',
    targetType: 'repository',
    target: 'none',
    details: (body) => ({
      workflows: Array.isArray(body.fileNames) ? body.fileNames.map((f) => (f as { id?: unknown }).id) : [],
    }),
  },
  'PUT /api/v1/credentials/:id/transfer': {
    action: 'credential.transferred',
    targetType: 'credential',
    target: 'param',
    details: pick('destinationProjectId'),
  },
};

/** Who acted and from where, as the request shows it. */
export function actorOf(
  request: FastifyRequest,
): Pick<AuditEvent, 'actorType' | 'actorId' | 'clientIp' | 'userAgent' | 'requestId'> {
  const p = request.principal;
  const ua = request.headers['user-agent'];
  return {
    actorType: p?.kind ?? 'anonymous',
    actorId: p ? (p.kind === 'session' ? (p.memberId ?? null) : p.keyId) : null,
    clientIp: request.ip,
    userAgent: typeof ua === 'string' ? ua : null,
    requestId: request.id,
  };
}

function idOf(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

function onSendFor(rule: AuditRule, audit: AuditLog, onError: (error: unknown) => void): onSendHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const principal = request.principal;
    if (reply.statusCode >= 300 || !principal) return payload;
    const params = request.params as { id?: unknown } | undefined;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const targetId =
      rule.target === 'param'
        ? typeof params?.id === 'string'
          ? params.id
          : null
        : rule.target === 'response'
          ? idOf(payload)
          : null;
    await audit
      .record({
        accountId: principal.accountId,
        action: rule.action,
        ...actorOf(request),
        targetType: rule.targetType,
        targetId,
        details: rule.details ? rule.details(body) : {},
      })
      .catch(onError);
    return payload;
  };
}

/**
 * Adds the audit write to the routes of AUDITED_ROUTES registered after this call (only to them: other
 * routes carry no extra hook).
 */
export function auditRoutes(app: FastifyInstance, audit: AuditLog, onError: (error: unknown) => void): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const rule = AUDITED_ROUTES[`${method} ${route.url}`];
      if (!rule) continue;
      const existing = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
      route.onSend = [...existing, onSendFor(rule, audit, onError)];
    }
  });
}
