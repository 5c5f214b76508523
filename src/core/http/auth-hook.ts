import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { ServiceId } from '../../config.js';
import { hasScope, hasService, type Operation, operationFor, type Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { andThen, type LimitCheck, type LimitDecision, type Limiter, type Maybe } from '../limits/limiter.js';
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

  /**
   * A check of `Limiter.check` and what it means here: refused with a 429 naming `what`, the key's
   * daily quota (counted in usage, its headers on the answer), or only read (`what` absent).
   */
  interface Gate {
    check: LimitCheck;
    what?: string;
    quota?: 'count' | 'read';
  }

  const windowOf = (kind: 'window' | 'readWindow', name: string, limit: number): LimitCheck => ({
    kind,
    name,
    limit,
    windowSeconds: limits.windowSeconds,
  });

  /**
   * Before a credential is looked at: the address's budget, then its failed authentications (an
   * address with too many is refused whatever it sends).
   */
  function beforeAuthentication(client: string, failureKey: string): Gate[] {
    const gates: Gate[] = [];
    if (limits.perIp > 0)
      gates.push({ check: windowOf('window', `ip:${client}`, limits.perIp), what: 'Rate limit per IP' });
    if (limits.authFailuresPerIp > 0)
      gates.push({
        check: windowOf('readWindow', failureKey, limits.authFailuresPerIp),
        what: 'Too many failed authentication attempts',
      });
    return gates;
  }

  /** A failed authentication counts against the address. */
  function failure(error: unknown, failureKey: string): Gate[] {
    if (limits.authFailuresPerIp > 0 && error instanceof AppError && error.code === 'UNAUTHORIZED')
      return [{ check: windowOf('window', failureKey, limits.authFailuresPerIp) }];
    return [];
  }

  /**
   * After authentication: a request the grant refuses only reads the key's quota (a request the
   * key may not make does not use it, but its answer carries the headers); one it allows passes the
   * short per-endpoint window, then counts against the quota (a request the window refuses does
   * not use the day's quota).
   */
  function afterAuthentication(
    request: FastifyRequest,
    auth: RouteAuth,
    principal: Principal,
    grantError: unknown,
  ): Gate[] {
    const gates: Gate[] = [];
    const quota = principal.keyId && principal.dailyQuota !== null;
    if (grantError !== undefined) {
      if (quota && grantError instanceof AppError)
        gates.push({
          check: {
            kind: 'readQuota',
            keyId: principal.keyId as string,
            limit: principal.dailyQuota as number,
          },
          quota: 'read',
        });
      return gates;
    }
    if (auth.endpointLimit && limits.perEndpoint > 0) {
      const who = principal.keyId ?? principal.accountId;
      gates.push({
        check: windowOf('window', `ep:${request.routeOptions.url}:${who}`, limits.perEndpoint),
        what: 'Rate limit per endpoint',
      });
    }
    if (quota)
      gates.push({
        check: { kind: 'quota', keyId: principal.keyId as string, limit: principal.dailyQuota as number },
        what: 'Daily request quota',
        quota: 'count',
      });
    return gates;
  }

  function grantErrorOf(request: FastifyRequest, auth: RouteAuth, principal: Principal): unknown {
    try {
      checkGrant(request, auth, principal);
      return undefined;
    } catch (error) {
      return error;
    }
  }

  /**
   * Runs the gates as one call to the counters and answers as running them one by one would: the
   * first refused one throws its 429. `principal` becomes the request's once the gates before index
   * `authorizedFrom` have passed; a grant error is thrown last, with the quota's headers.
   */
  function settle(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: RouteAuth,
    gates: Gate[],
    principal: Principal | null,
    authorizedFrom: number,
    grantError?: unknown,
  ): Maybe<void> {
    return andThen(limiter.check(gates.map((g) => g.check)), (decisions) => {
      for (let i = 0; i < decisions.length; i++) {
        if (i === authorizedFrom && principal) request.principal = principal;
        const gate = gates[i] as Gate;
        const decision = decisions[i] as LimitDecision;
        if (gate.quota === 'read' && grantError instanceof AppError)
          Object.assign(grantError.headers, limitHeaders(decision));
        if (gate.quota === 'count' && principal) deps.usage.record(principal, auth.service, decision.allowed);
        if (gate.what && !decision.allowed) throw tooMany(decision, gate.what);
        if (gate.quota === 'count') setLimitHeaders(reply, decision);
      }
      if (decisions.length <= authorizedFrom && principal) request.principal = principal;
      if (grantError !== undefined) throw grantError;
    });
  }

  /** After the gates, a credential not verified in this process before (the database, a session). */
  function authenticateInFull(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: RouteAuth,
    failureKey: string,
  ): Promise<void> {
    return deps.authenticator.authenticate(request).then(
      (principal) => {
        const grantError = grantErrorOf(request, auth, principal);
        return settle(
          request,
          reply,
          auth,
          afterAuthentication(request, auth, principal, grantError),
          principal,
          0,
          grantError,
        );
      },
      (error: unknown) =>
        andThen(settle(request, reply, auth, failure(error, failureKey), null, 0), () => {
          throw error;
        }),
    );
  }

  /**
   * Limits, authentication, authorization and the quota in this order. A key verified before in
   * this process is known without waiting, so all its checks go to the counters at once: one
   * round trip to Redis per request (none on in-process counters), deciding as the steps would one
   * by one. Any other credential: the gates, then its verification, then the checks after it.
   */
  function check(request: FastifyRequest, reply: FastifyReply): Maybe<void> {
    if (!warnedForwarding) warnUntrustedForwarding(request);
    const config = request.routeOptions.config;
    const auth = config.auth;
    const client = rateLimitClient(request.ip);
    if (!auth) return config.public && config.limited ? publicLimits(request, reply, client) : undefined;
    const failureKey = `authfail:${client}`;
    const before = beforeAuthentication(client, failureKey);
    let principal: Principal | undefined;
    try {
      principal = deps.authenticator.authenticateCached?.(request);
    } catch (error) {
      // A key known here that may no longer be used (revoked, expired, its grace ended).
      return andThen(
        settle(request, reply, auth, [...before, ...failure(error, failureKey)], null, 0),
        () => {
          throw error;
        },
      );
    }
    if (principal) {
      const grantError = grantErrorOf(request, auth, principal);
      const after = afterAuthentication(request, auth, principal, grantError);
      return settle(request, reply, auth, [...before, ...after], principal, before.length, grantError);
    }
    return andThen(settle(request, reply, auth, before, null, 0), () =>
      authenticateInFull(request, reply, auth, failureKey),
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
