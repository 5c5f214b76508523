import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { loggedPath } from '../../core/http/logged-path.js';
import type { RequestLog } from './request-log.js';

/**
 * The request log's one hook: after every authenticated response, a row with the method, the path
 * without its query string, the status, the latency, the key or member, the client and the request id
 * goes into the log's memory batch (no database call here). Unauthenticated requests (webhooks,
 * health, a refused key) belong to no account and are not logged.
 */
export function registerRequestLogHook(app: FastifyInstance, log: RequestLog): void {
  if (!log.enabled) return;
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const p = request.principal;
    if (p) {
      const ua = request.headers['user-agent'];
      log.record({
        accountId: p.accountId,
        requestId: request.id,
        method: request.method,
        path: loggedPath(request.url),
        route: request.routeOptions.url ?? null,
        service: request.routeOptions.config?.auth?.service ?? null,
        status: reply.statusCode,
        latencyMs: reply.elapsedTime,
        keyId: p.keyId,
        memberId: p.kind === 'session' ? (p.memberId ?? null) : null,
        principalKind: p.kind,
        clientIp: request.ip,
        userAgent: typeof ua === 'string' ? ua : null,
      });
    }
    done();
  });
}
