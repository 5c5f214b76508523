import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ServiceId } from '../../config.js';
import { hasScope, hasService, type Operation, operationFor, type Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { LimitDecision, Limiter } from '../limits/limiter.js';

/** Verifies the credentials of a request; throws AppError UNAUTHORIZED. Implemented by the auth module. */
export interface Authenticator {
  authenticate(request: FastifyRequest): Promise<Principal>;
}

/** Records per-key, per-day, per-service request counts. Implemented by the auth module. */
export interface UsageRecorder {
  record(principal: Principal, service: ServiceId, allowed: boolean): void;
}

/** How a route is protected. Every route declares either `auth` or `public`. */
export interface RouteAuth {
  service: ServiceId;
  /** Overrides the operation derived from the method (e.g. `admin` for key management). */
  operation?: Operation;
  /** Principal kinds accepted; default all. */
  principals?: ReadonlyArray<Principal['kind']>;
  /** Also apply the short-window per-endpoint limiter. */
  endpointLimit?: boolean;
  /** Any authenticated principal of an allowed kind; the service checks what it may do. */
  anyService?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** No platform authentication (health, docs, webhooks with their own). */
    public?: boolean;
    /** For public routes: apply the per-IP and per-endpoint limiters. */
    limited?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthHookDeps {
  authenticator: Authenticator;
  limiter: Limiter;
  usage: UsageRecorder;
  limits: { windowSeconds: number; perIp: number; perEndpoint: number; authFailuresPerIp: number };
}

export function setLimitHeaders(reply: FastifyReply, decision: LimitDecision): void {
  reply.header('x-ratelimit-limit', decision.limit);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.reset);
}

function tooMany(decision: LimitDecision, what: string): AppError {
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `${what} exceeded; retry after ${decision.retryAfter} s`,
    { limit: decision.limit, reset: decision.reset },
    {
      'retry-after': String(decision.retryAfter),
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(decision.reset),
    },
  );
}

export function createAuthHook(deps: AuthHookDeps): onRequestAsyncHookHandler {
  const { limiter, limits } = deps;

  async function windowLimit(name: string, limit: number, what: string): Promise<LimitDecision | null> {
    if (limit <= 0) return null;
    const decision = await limiter.window(name, limit, limits.windowSeconds);
    if (!decision.allowed) throw tooMany(decision, what);
    return decision;
  }

  return async function authHook(request, reply) {
    const config = request.routeOptions.config;
    const auth = config.auth;
    if (!auth) {
      if (config.public && config.limited) {
        await windowLimit(`ip:${request.ip}`, limits.perIp, 'Rate limit per IP');
        const endpoint = await windowLimit(
          `ep:${request.routeOptions.url}:${request.ip}`,
          limits.perEndpoint,
          'Rate limit per endpoint',
        );
        if (endpoint) setLimitHeaders(reply, endpoint);
      }
      return;
    }
    await windowLimit(`ip:${request.ip}`, limits.perIp, 'Rate limit per IP');

    const failureKey = `authfail:${request.ip}`;
    if (limits.authFailuresPerIp > 0) {
      const failures = await limiter.peekWindow(failureKey, limits.authFailuresPerIp, limits.windowSeconds);
      if (!failures.allowed) throw tooMany(failures, 'Too many failed authentication attempts');
    }
    let principal: Principal;
    try {
      principal = await deps.authenticator.authenticate(request);
    } catch (error) {
      if (limits.authFailuresPerIp > 0 && error instanceof AppError && error.code === 'UNAUTHORIZED') {
        await limiter.window(failureKey, limits.authFailuresPerIp, limits.windowSeconds);
      }
      throw error;
    }
    request.principal = principal;

    if (auth.principals && !auth.principals.includes(principal.kind)) {
      throw new AppError(
        'FORBIDDEN',
        `This operation is not available to a ${principal.kind.replace('_', ' ')}`,
      );
    }
    if (auth.anyService) {
      // The route checks the grant itself (e.g. a token can never exceed its key).
    } else if (!hasService(principal, auth.service)) {
      throw new AppError('FORBIDDEN', `This credential may not use the '${auth.service}' service`, {
        service: auth.service,
      });
    }
    const operation = auth.operation ?? operationFor(request.method);
    if (!auth.anyService && !hasScope(principal, auth.service, operation)) {
      throw new AppError('FORBIDDEN', `Missing scope ${auth.service}:${operation}`, {
        requiredScope: `${auth.service}:${operation}`,
      });
    }
    if (principal.ipAllowed && !principal.ipAllowed(request.ip)) {
      throw new AppError('FORBIDDEN', 'Client address is not allowed for this key', { ip: request.ip });
    }

    if (principal.keyId && principal.dailyQuota !== null) {
      const quota = await limiter.dailyQuota(principal.keyId, principal.dailyQuota);
      deps.usage.record(principal, auth.service, quota.allowed);
      if (!quota.allowed) throw tooMany(quota, 'Daily request quota');
      setLimitHeaders(reply, quota);
    }
    if (auth.endpointLimit) {
      const who = principal.keyId ?? principal.accountId;
      await windowLimit(
        `ep:${request.routeOptions.url}:${who}`,
        limits.perEndpoint,
        'Rate limit per endpoint',
      );
    }
  };
}
