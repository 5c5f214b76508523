import { createHash } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { excessScopes } from '../../core/auth/ceiling.js';
import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { VerifiedKey } from './key-verifier.js';
import type { CreateTokenInput } from './schemas.js';

const ISSUER = 'api-platform';
const AUDIENCE = 'api-platform:customer';

/**
 * What a token says. A JWT's payload is only encoded, so it holds nothing the customer should
 * not read: no account id (the account is the issuing key's, found server-side).
 */
interface TokenClaims {
  customerId: string;
  keyId: string;
  /** The issuing key's value when the token was minted (`VerifiedKey.tokenBinding`). */
  binding: string;
  scopes: string[];
}

/** Verified tokens kept (by their hash) at most this long, and never past their own expiry. */
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;

/** Short-lived JWTs (HS256) a key mints for one of its customers; never broader than the key. */
export class CustomerTokens {
  /**
   * Tokens whose signature and claims were checked, by SHA-256 of the token (the token itself is not
   * kept), with when to check again. What a token says cannot change, so this skips only the JWT
   * work: the issuing key (revoked, rotated, narrowed) is still checked on every request.
   */
  private readonly verified = new LRUCache<string, { claims: TokenClaims; untilMs: number }>({
    max: VERIFIED_MAX,
  });

  constructor(
    private readonly secret: Uint8Array,
    private readonly clock: Clock,
    private readonly ttl: { defaultSeconds: number; maxSeconds: number },
    /** The issuing key as it is now (cached, dropped on every change of the key). */
    private readonly issuingKey: (keyId: string) => Promise<VerifiedKey>,
  ) {}

  /** The longest lifetime a token may ask for (CUSTOMER_TOKEN_MAX_TTL_SECONDS). */
  get maxTtlSeconds(): number {
    return this.ttl.maxSeconds;
  }

  async mint(issuer: Principal, input: CreateTokenInput) {
    if (issuer.kind !== 'api_key' || !issuer.keyId) {
      throw new AppError('FORBIDDEN', 'Only an API key can mint customer tokens');
    }
    // The platform's one ceiling rule (core/auth/ceiling.ts); the key's models, token budget and
    // address rules bind the token when it is used (authenticator.ts), its expiry here.
    const excess = excessScopes(issuer, input.scopes);
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
    const key = await this.issuingKey(issuer.keyId);
    const nowMs = this.clock.now().getTime();
    // Never outlives the key, nor the presented value (the old value of a rotated key).
    const expMs = Math.min(
      nowMs + requested * 1000,
      key.expiresAtMs,
      issuer.credentialEndsAtMs ?? Number.POSITIVE_INFINITY,
    );
    const token = await new SignJWT({
      scope: input.scopes.join(' '),
      key: issuer.keyId,
      kv: key.tokenBinding,
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
    const hash = createHash('sha256').update(token).digest('base64url');
    const nowMs = this.clock.now().getTime();
    const known = this.verified.get(hash);
    if (known && nowMs < known.untilMs) return { ...known.claims, scopes: [...known.claims.scopes] };
    const claims = await this.verifyJwt(token);
    this.verified.set(hash, {
      claims: { ...claims, scopes: [...claims.scopes] },
      untilMs: Math.min(claims.expMs, nowMs + VERIFIED_TTL_MS),
    });
    return claims;
  }

  private async verifyJwt(token: string): Promise<TokenClaims & { expMs: number }> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        // A token without an expiry would live forever: refuse it even if correctly signed.
        requiredClaims: ['exp', 'sub'],
        currentDate: this.clock.now(),
      });
      const { sub, scope, key, kv, exp } = payload as Record<string, unknown>;
      if (
        typeof sub !== 'string' ||
        typeof scope !== 'string' ||
        typeof key !== 'string' ||
        typeof kv !== 'string' ||
        typeof exp !== 'number'
      ) {
        throw new AppError('UNAUTHORIZED', 'Customer token is invalid');
      }
      return {
        customerId: sub,
        keyId: key,
        binding: kv,
        scopes: scope.split(' ').filter(Boolean),
        expMs: exp * 1000,
      };
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (error instanceof joseErrors.JWTExpired)
        throw new AppError('UNAUTHORIZED', 'Customer token has expired');
      throw new AppError('UNAUTHORIZED', 'Customer token is invalid');
    }
  }
}
