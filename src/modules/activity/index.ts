import type { FastifyRequest } from 'fastify';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { type AuditEvent, AuditLog } from './audit-log.js';
import { actorOf, auditRoutes } from './audited-routes.js';
import { activityMigrations } from './migrations/index.js';
import { RequestLog } from './request-log.js';
import { registerRequestLogHook } from './request-log-hook.js';
import { activityRoutes } from './routes.js';

/** What other modules may use: write an audit event the route table cannot see (a sign-in). */
export interface ActivityApi {
  /** Records `action` on `target` as done by the request's caller (or `actor`, for a public route). */
  audit(
    request: FastifyRequest,
    event: Pick<AuditEvent, 'accountId' | 'action' | 'targetType' | 'targetId' | 'details'> &
      Partial<Pick<AuditEvent, 'actorType' | 'actorId'>>,
  ): Promise<void>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    activity: ActivityApi;
  }
}

const internals = new WeakMap<AppContext, { requests: RequestLog; audit: AuditLog }>();

/**
 * The request log and the audit trail of every account (`GET /v1/request-logs`, `GET /v1/audit-events`).
 * First in the module list: its hooks are in place before any other module registers a route.
 */
export const activityModule: PlatformModule = {
  name: 'activity',
  services: [],
  migrations: activityMigrations,

  init(ctx) {
    const onError = (err: unknown) => ctx.log.error({ err }, 'activity log write failed');
    const requests = new RequestLog(ctx.db, ctx.clock, ctx.config.REQUEST_LOG_RETENTION_DAYS, onError);
    if (requests.enabled) {
      requests.start(1);
      ctx.onClose(() => requests.stop());
    }
    const audit = new AuditLog(ctx.db, ctx.clock);
    internals.set(ctx, { requests, audit });
    ctx.apis.activity = {
      audit: (request, event) => audit.record({ ...actorOf(request), ...event }).catch(onError),
    };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('activity module not initialised');
    registerRequestLogHook(app, deps.requests);
    auditRoutes(app, deps.audit, (err) => ctx.log.error({ err }, 'audit event write failed'));
    if (ctx.services.has('core')) activityRoutes(app, deps);
  },
};
