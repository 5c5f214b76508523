import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { ServiceId } from '../../config.js';
import { hasScope, hasService, type Operation, operationFor, type Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { andThen, type LimitDecision, type Limiter, type Maybe } from '../limits/limiter.js';
import { isPrivateAddress, rateLimitClient } from './ip-rules.js';

/** Verifies the credentials of a request; throws AppError UNAUTHORIZED. Implemented by the auth module. */
export interface Authenticator {
  authenticate(request: FastifyRequest): Promise<Principal>;
  /**
   * Optional fast path: the principal of a credential already verified in this process,
   * checked as `authenticate` would (throws the same errors); undefined to call `authenticate`.
   */
  authenticateCached?(request: FastifyRequest): Principal | undefined;
}

/** Records per-key, per-day, per-service request counts. Implemented by the auth module. */
export interface UsageRecorder {
  record(principal: Principal, service: ServiceId, allowed: boolean): void;
}

/** How a route is protected. Every route declares either `auth` or `public`. */
export interface RouteAuth {
  service: ServiceId;
  /**
   * Overrides the operation derived from the method (e.g. `admin` for key management); a list
   * accepts a scope for any one of them.
   */
  operation?: Operation | readonly Operation[];
  /** Principal kinds accepted; default all (customer tokens only with `customerFacing`). */
  principals?: ReadonlyArray<Principal['kind']>;
  /**
   * A route a customer acts on through a customer token (their blends, cart, game connection).
   * Customer tokens are refused on every other route: a token is a customer's credential, not
   * the integration's, whatever scopes it carries.
   */
  customerFacing?: boolean;
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

interface AuthHookDeps {
  authenticator: Authenticator;
  limiter: Limiter;
  usage: UsageRecorder;
  limits: { windowSeconds: number; perIp: number; perEndpoint: number; authFailuresPerIp: number };
}

/** The principal the auth hook set on an authenticated route (a programming error if absent). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('auth hook did not run');
  return request.principal;
}

function setLimitHeaders(reply: FastifyReply, decision: LimitDecision): void {
  reply.header('x-ratelimit-limit', decision.limit);
  reply.header('x-ratelimit-remaining', decision.remaining);
  reply.header('x-ratelimit-reset', decision.reset);
}

/** `X-RateLimit-*` of a decision, for an answer built elsewhere (an error, a webhook's reply). */
export function limitHeaders(decision: LimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.reset),
  };
}

/** The 429 for a refused decision, with `Retry-After` and the limit's headers. */
export function tooMany(decision: LimitDecision, what: string): AppError {
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `${what} exceeded; retry after ${decision.retryAfter} s`,
    { limit: decision.limit, reset: decision.reset },
    { 'retry-after': String(decision.retryAfter), ...limitHeaders(decision), 'x-ratelimit-remaining': '0' },
  );
}

/** Service, scope and address rules of a route for an authenticated principal; throws FORBIDDEN. */
function checkGrant(request: FastifyRequest, auth: RouteAuth, principal: Principal): void {
  if (principal.kind === 'customer_token' && !auth.customerFacing) {
    throw new AppError('FORBIDDEN', 'Customer tokens are not accepted on this route; use an API key');
  }
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
  if (!auth.anyService) {
    const operation = auth.operation ?? operationFor(request.method);
    if (typeof operation === 'string') {
      if (!hasScope(principal, auth.service, operation)) {
        throw new AppError('FORBIDDEN', `Missing scope ${auth.service}:${operation}`, {
          requiredScope: `${auth.service}:${operation}`,
        });
      }
    } else if (!operation.some((op) => hasScope(principal, auth.service, op))) {
      const accepted = operation.map((op) => `${auth.service}:${op}`);
      throw new AppError('FORBIDDEN', `Missing scope: one of ${accepted.join(', ')}`, {
        requiredScope: accepted[0],
        acceptedScopes: accepted,
      });
    }
  }
  if (principal.ipAllowed && !principal.ipAllowed(request.ip)) {
    throw new AppError('FORBIDDEN', 'Client address is not allowed for this key', { ip: request.ip });
  }
}

/**
 * The platform's onRequest hook: limits, authentication, authorization and the daily quota.
 * Each step answers at once when it can (in-process counters, a key verified before) and only
 * waits when it must (Redis, the database), so a cached key on in-process counters runs to the
 * end without a promise; the steps and their order are the same either way.
 */
export function createAuthHook(deps: AuthHookDeps): onRequestHookHandler {
  const { limiter, limits } = deps;
  let warnedForwarding = false;

  /**
   * Behind a proxy that is not trusted every client has the proxy's address, so one client's
   * failures lock out all: say so once, on the first such request.
   */
  function warnUntrustedForwarding(request: FastifyRequest): void {
    if (request.headers['x-forwarded-for'] === undefined) return;
    const peer = request.raw.socket?.remoteAddress;
    if (!peer || request.ip !== peer || !isPrivateAddress(peer)) return;
    warnedForwarding = true;
    request.log.warn(
      { peer },
      'A request from a private address carries X-Forwarded-For but TRUST_PROXY does not trust it: ' +
        'every client behind that proxy shares its per-IP limits. Set TRUST_PROXY to the hop count ' +
        'or the proxy addresses.',
    );
  }

  function windowLimit(name: string, limit: number, what: string): Maybe<LimitDecision | null> {
    if (limit <= 0) return null;
    return andThen(limiter.hitWindow(name, limit, limits.windowSeconds), (decision) => {
      if (!decision.allowed) throw tooMany(decision, what);
      return decision;
    });
  }

  function publicLimits(request: FastifyRequest, reply: FastifyReply, client: string): Maybe<void> {
    return andThen(windowLimit(`ip:${client}`, limits.perIp, 'Rate limit per IP'), () =>
      andThen(
        windowLimit(
          `ep:${request.routeOptions.url}:${client}`,
          limits.perEndpoint,
          'Rate limit per endpoint',
        ),
        (endpoint) => {
          if (endpoint) setLimitHeaders(reply, endpoint);
        },
      ),
    );
  }

  /** Refuses an address with too many failed authentications, before looking at its credential. */
  function failureGate(failureKey: string): Maybe<void> {
    if (limits.authFailuresPerIp <= 0) return;
    return andThen(
      limiter.readWindow(failureKey, limits.authFailuresPerIp, limits.windowSeconds),
      (failures) => {
        if (!failures.allowed) throw tooMany(failures, 'Too many failed authentication attempts');
      },
    );
  }

  /** Counts a failed authentication against the address, then throws the failure. */
  function failed(error: unknown, failureKey: string): Maybe<never> {
    if (limits.authFailuresPerIp > 0 && error instanceof AppError && error.code === 'UNAUTHORIZED') {
      return andThen(limiter.hitWindow(failureKey, limits.authFailuresPerIp, limits.windowSeconds), () => {
        throw error;
      });
    }
    throw error;
  }

  /**
   * A refused request of an authenticated key still carries its quota headers (read, not counted:
   * a request the key may not make does not use its quota).
   */
  function withQuotaHeaders(error: unknown, principal: Principal): Maybe<never> {
    if (!(error instanceof AppError) || !principal.keyId || principal.dailyQuota === null) throw error;
    return andThen(limiter.readDailyQuota(principal.keyId, principal.dailyQuota), (quota) => {
      Object.assign(error.headers, limitHeaders(quota));
      throw error;
    });
  }

  function authenticate(request: FastifyRequest, failureKey: string): Maybe<Principal> {
    let principal: Principal | undefined;
    try {
      principal = deps.authenticator.authenticateCached?.(request);
    } catch (error) {
      return failed(error, failureKey);
    }
    if (principal) return principal;
    return deps.authenticator.authenticate(request).catch((error: unknown) => failed(error, failureKey));
  }

  function authorize(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: RouteAuth,
    principal: Principal,
  ): Maybe<void> {
    request.principal = principal;
    try {
      checkGrant(request, auth, principal);
    } catch (error) {
      return withQuotaHeaders(error, principal);
    }

    const dailyQuota = (): Maybe<void> => {
      if (!principal.keyId || principal.dailyQuota === null) return;
      return andThen(limiter.hitDailyQuota(principal.keyId, principal.dailyQuota), (quota) => {
        deps.usage.record(principal, auth.service, quota.allowed);
        if (!quota.allowed) throw tooMany(quota, 'Daily request quota');
        setLimitHeaders(reply, quota);
      });
    };
    if (!auth.endpointLimit) return dailyQuota();
    // The short window first: a request it refuses does not use the day's quota.
    const who = principal.keyId ?? principal.accountId;
    return andThen(
      windowLimit(`ep:${request.routeOptions.url}:${who}`, limits.perEndpoint, 'Rate limit per endpoint'),
      dailyQuota,
    );
  }

  function check(request: FastifyRequest, reply: FastifyReply): Maybe<void> {
    if (!warnedForwarding) warnUntrustedForwarding(request);
    const config = request.routeOptions.config;
    const auth = config.auth;
    const client = rateLimitClient(request.ip);
    if (!auth) return config.public && config.limited ? publicLimits(request, reply, client) : undefined;
    const failureKey = `authfail:${client}`;
    return andThen(windowLimit(`ip:${client}`, limits.perIp, 'Rate limit per IP'), () =>
      andThen(failureGate(failureKey), () =>
        andThen(authenticate(request, failureKey), (principal) => authorize(request, reply, auth, principal)),
      ),
    );
  }

  return function authHook(request, reply, done) {
    let pending: Maybe<void>;
    try {
      pending = check(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (pending instanceof Promise) pending.then(() => done(), done);
    else done();
  };
}
