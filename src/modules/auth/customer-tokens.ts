import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ALL_SERVICES } from '../../config.js';
import { expandScopes, type Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { CreateTokenInput } from './schemas.js';

const ISSUER = 'api-platform';
const AUDIENCE = 'api-platform:customer';

export interface TokenClaims {
  customerId: string;
  keyId: string;
  accountId: string;
  scopes: string[];
}

/** Short-lived JWTs (HS256) a key mints for one of its customers; never broader than the key. */
export class CustomerTokens {
  constructor(
    private readonly secret: Uint8Array,
    private readonly clock: Clock,
    private readonly ttl: { defaultSeconds: number; maxSeconds: number },
  ) {}

  async mint(issuer: Principal, input: CreateTokenInput, keyExpiresAt: string) {
    if (issuer.kind !== 'api_key' || !issuer.keyId) {
      throw new AppError('FORBIDDEN', 'Only an API key can mint customer tokens');
    }
    const held = new Set(expandScopes(issuer, ALL_SERVICES));
    const excess = input.scopes.filter((s) => !held.has(s));
    if (excess.length > 0) {
      throw new AppError('FORBIDDEN', 'A token cannot carry scopes its key does not hold', {
        scopes: excess,
      });
    }
    const requested = input.ttlSeconds ?? this.ttl.defaultSeconds;
    if (requested > this.ttl.maxSeconds) {
      throw new AppError('VALIDATION_ERROR', `ttlSeconds must be at most ${this.ttl.maxSeconds}`, {
        fields: [{ field: 'body.ttlSeconds', message: `must be at most ${this.ttl.maxSeconds}` }],
      });
    }
    const nowMs = this.clock.now().getTime();
    const expMs = Math.min(nowMs + requested * 1000, Date.parse(keyExpiresAt));
    const token = await new SignJWT({
      scope: input.scopes.join(' '),
      key: issuer.keyId,
      acct: issuer.accountId,
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(input.customerId)
      .setJti(newId('tok'))
      .setIssuedAt(Math.floor(nowMs / 1000))
      .setExpirationTime(Math.floor(expMs / 1000))
      .sign(this.secret);
    return {
      token,
      tokenType: 'Bearer' as const,
      customerId: input.customerId,
      scopes: input.scopes,
      expiresAt: new Date(Math.floor(expMs / 1000) * 1000).toISOString(),
    };
  }

  async verify(token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        // A token without an expiry would live forever: refuse it even if correctly signed.
        requiredClaims: ['exp', 'sub'],
        currentDate: this.clock.now(),
      });
      const { sub, scope, key, acct } = payload as Record<string, unknown>;
      if (
        typeof sub !== 'string' ||
        typeof scope !== 'string' ||
        typeof key !== 'string' ||
        typeof acct !== 'string'
      ) {
        throw new AppError('UNAUTHORIZED', 'Customer token is invalid');
      }
      return { customerId: sub, keyId: key, accountId: acct, scopes: scope.split(' ').filter(Boolean) };
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (error instanceof joseErrors.JWTExpired)
        throw new AppError('UNAUTHORIZED', 'Customer token has expired');
      throw new AppError('UNAUTHORIZED', 'Customer token is invalid');
    }
  }
}
