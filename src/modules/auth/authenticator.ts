import type { FastifyRequest } from 'fastify';
import { ALL_SERVICES } from '../../config.js';
import { expandScopes, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import type { Authenticator } from '../../core/http/auth-hook.js';
import type { CustomerTokens } from './customer-tokens.js';
import { looksLikeKey } from './key-format.js';
import type { KeyVerifier } from './key-verifier.js';

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** Where a credential is read, in order: Authorization Bearer, X-WORKFLOW-API-KEY, X-N8N-API-KEY (n8n's clients), X-API-Key. */
export function readCredential(headers: FastifyRequest['headers']): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1])
      throw new AppError('UNAUTHORIZED', 'Authorization header must be "Bearer <API key or token>"');
    return match[1];
  }
  for (const name of ['x-workflow-api-key', 'x-n8n-api-key', 'x-api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value.length > 0) return value.trim();
  }
  return null;
}

export class PlatformAuthenticator implements Authenticator {
  constructor(
    private readonly keys: KeyVerifier,
    private readonly tokens: CustomerTokens,
  ) {}

  /** An API key this process has verified before, without waiting; undefined otherwise. */
  authenticateCached(request: FastifyRequest): Principal | undefined {
    const credential = readCredential(request.headers);
    if (credential === null || !looksLikeKey(credential)) return undefined;
    return this.keys.cached(credential);
  }

  async authenticate(request: FastifyRequest): Promise<Principal> {
    const credential = readCredential(request.headers);
    if (credential === null) throw new AppError('UNAUTHORIZED', 'API key is missing');
    if (looksLikeKey(credential)) return this.verifyApiKey(credential);
    if (JWT_SHAPE.test(credential)) return this.verifyToken(credential);
    throw new AppError('UNAUTHORIZED', 'API key is malformed');
  }

  /** Verifies a raw API key value (also used by webhooks that take `X-API-Key`). */
  async verifyApiKey(value: string): Promise<Principal> {
    return this.keys.verifyValue(value);
  }

  private async verifyToken(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    const entry = await this.keys.verifyId(claims.keyId);
    // Minted before the key's value changed (rotation): the token went with the old value.
    if (claims.binding !== entry.tokenBinding)
      throw new AppError('UNAUTHORIZED', 'Customer token is no longer valid: its key was rotated');
    const key = this.keys.principalOf(entry);
    // The key's grant today bounds the token: narrowing the key narrows its tokens.
    const held = new Set(expandScopes(key, ALL_SERVICES));
    const scopes = claims.scopes.filter((s) => held.has(s));
    return {
      kind: 'customer_token',
      accountId: key.accountId,
      keyId: key.keyId,
      keyType: key.keyType,
      services: [...new Set(scopes.map((s) => s.split(':')[0] ?? ''))],
      role: 'Custom',
      scopes,
      customerId: claims.customerId,
      dailyQuota: key.dailyQuota,
      // A token never reaches further than its key: the key's models and token budget bind it.
      models: key.models,
      dailyTokenBudget: key.dailyTokenBudget,
      // The key's address rules as they are now: a token is no way around them.
      ipAllowed: key.ipAllowed,
    };
  }
}
