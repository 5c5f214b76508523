import type { FastifyRequest } from 'fastify';
import { hasScope, hasService, type Operation, type Principal } from '../../core/auth/principal.js';
import { type AppContext, requireApi } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { tooMany } from '../../core/http/auth-hook.js';
import { rateLimitClient } from '../../core/http/ip-rules.js';
import { BEARER_PROTOCOL_PREFIX, bearerProtocol } from './ws-protocol.js';

const SERVICE = 'agent';
const CREDENTIAL_HEADERS = ['authorization', 'x-workflow-api-key', 'x-api-key'] as const;

/**
 * The headers a credential was presented in, kept for the connection's life so that it can be
 * verified again exactly as at the upgrade (the authenticator reads nothing else of a request).
 */
export type CredentialHeaders = Record<string, string>;

/** Who is on a connection, and how to check that they still may be. */
export interface SocketIdentity {
  principal: Principal;
  headers: CredentialHeaders;
  ip: string;
}

/** Where the credential of an upgrade is: a header, else a `bearer.<token>` subprotocol (browsers). */
function credentialHeaders(request: FastifyRequest): CredentialHeaders | null {
  const headers: CredentialHeaders = {};
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string' && value.length > 0) headers[name] = value;
  }
  if (Object.keys(headers).length > 0) return headers;
  const protocol = bearerProtocol(request.headers['sec-websocket-protocol']);
  return protocol ? { authorization: `Bearer ${protocol.slice(BEARER_PROTOCOL_PREFIX.length)}` } : null;
}

/**
 * Authentication and authorization of the WebSocket route. The route is public to the platform's
 * auth hook because that hook reads headers only; this gate does the same steps (per-IP window,
 * failed-authentication gate, credential, service, scope, address rules, daily quota) with the
 * subprotocol as a second place for the credential, and again on the open connection.
 */
export class SocketGate {
  constructor(private readonly ctx: AppContext) {}

  /** Checks an upgrade; throws the AppError to answer (401, 403, 429) before any upgrade. */
  async admit(request: FastifyRequest): Promise<SocketIdentity> {
    const { config, limiter } = this.ctx;
    const client = rateLimitClient(request.ip);
    await this.window(`ip:${client}`, config.RATE_LIMIT_PER_IP, 'Rate limit per IP');
    const failureKey = `authfail:${client}`;
    if (config.AUTH_FAILURES_PER_IP > 0) {
      const failures = await limiter.readWindow(
        failureKey,
        config.AUTH_FAILURES_PER_IP,
        config.RATE_LIMIT_WINDOW_SECONDS,
      );
      if (!failures.allowed) throw tooMany(failures, 'Too many failed authentication attempts');
    }
    const headers = credentialHeaders(request);
    let principal: Principal;
    try {
      if (!headers) throw new AppError('UNAUTHORIZED', 'API key is missing');
      principal = await this.authenticate(headers);
    } catch (error) {
      if (error instanceof AppError && error.code === 'UNAUTHORIZED' && config.AUTH_FAILURES_PER_IP > 0)
        await limiter.hitWindow(failureKey, config.AUTH_FAILURES_PER_IP, config.RATE_LIMIT_WINDOW_SECONDS);
      throw error;
    }
    // Reading or posting: a connection is for both, so either grant opens it; a send needs write.
    this.authorize(principal, request.ip, ['read', 'write']);
    await this.countRequest(principal);
    return { principal, headers: headers as CredentialHeaders, ip: request.ip };
  }

  /**
   * The connection's credential verified again (revocation, expiry, rotation, a narrowed grant);
   * throws UNAUTHORIZED whatever the reason: the connection ends with 4001 either way.
   */
  async reverify(identity: SocketIdentity): Promise<Principal> {
    try {
      const principal = await this.authenticate(identity.headers);
      this.authorize(principal, identity.ip, ['read', 'write']);
      return principal;
    } catch (error) {
      if (error instanceof AppError && (error.code === 'UNAUTHORIZED' || error.code === 'FORBIDDEN'))
        throw new AppError('UNAUTHORIZED', error.message);
      throw error;
    }
  }

  /** Service, scope (any one of `operations`) and address rules; throws FORBIDDEN. */
  authorize(principal: Principal, ip: string, operations: readonly Operation[]): void {
    if (!hasService(principal, SERVICE))
      throw new AppError('FORBIDDEN', `This credential may not use the '${SERVICE}' service`, {
        service: SERVICE,
      });
    if (!operations.some((op) => hasScope(principal, SERVICE, op))) {
      const accepted = operations.map((op) => `${SERVICE}:${op}`);
      throw new AppError('FORBIDDEN', `Missing scope: one of ${accepted.join(', ')}`, {
        requiredScope: accepted[0],
        acceptedScopes: accepted,
      });
    }
    if (principal.ipAllowed && !principal.ipAllowed(ip))
      throw new AppError('FORBIDDEN', 'Client address is not allowed for this key', { ip });
  }

  /**
   * One request against the key's daily quota, as the auth hook counts an HTTP request: the upgrade
   * is one, and so is each message sent (else a socket would be a way around the quota).
   */
  async countRequest(principal: Principal): Promise<void> {
    if (!principal.keyId || principal.dailyQuota === null) return;
    const quota = await this.ctx.limiter.hitDailyQuota(principal.keyId, principal.dailyQuota);
    requireApi(this.ctx, 'auth').usage.record(principal, SERVICE, quota.allowed);
    if (!quota.allowed) throw tooMany(quota, 'Daily request quota');
  }

  private async authenticate(headers: CredentialHeaders): Promise<Principal> {
    // The authenticator reads only `request.headers`: a request made of the kept headers is enough.
    const probe = { headers } as unknown as FastifyRequest;
    return requireApi(this.ctx, 'auth').authenticator.authenticate(probe);
  }

  private async window(name: string, limit: number, what: string): Promise<void> {
    if (limit <= 0) return;
    const decision = await this.ctx.limiter.hitWindow(name, limit, this.ctx.config.RATE_LIMIT_WINDOW_SECONDS);
    if (!decision.allowed) throw tooMany(decision, what);
  }
}
