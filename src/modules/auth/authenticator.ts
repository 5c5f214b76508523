import type { FastifyRequest } from 'fastify';
import { ALL_SERVICES } from '../../config.js';
import { expandScopes, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import type { Authenticator } from '../../core/http/auth-hook.js';
import { sameSecret } from '../../core/secrets.js';
import type { CustomerTokens } from './customer-tokens.js';
import { looksLikeKey } from './key-format.js';
import type { KeyVerifier } from './key-verifier.js';

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** The browser session's cookie (the portal's sign-in). */
export const SESSION_COOKIE = 'platform_session';
const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Checks a session cookie's value; implemented by the portal module. */
interface SessionVerifier {
  /** The session's principal and the CSRF token its state-changing requests must carry; throws 401. */
  verify(token: string, request: FastifyRequest): Promise<{ principal: Principal; csrfToken: string }>;
}

/** One cookie's value from a `Cookie` header; null when absent or empty. */
function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    const value = part.slice(at + 1).trim();
    return value.length > 0 ? value : null;
  }
  return null;
}

/**
 * A browser request from another origin: its `Origin` names neither PUBLIC_URL's origin nor the
 * Host it was sent to. Requests without `Origin` (same-origin GETs, non-browser clients) pass.
 */
export function crossOrigin(request: FastifyRequest, publicOrigin: string): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (origin === publicOrigin) return false;
  try {
    const host = request.headers.host;
    return !host || new URL(origin).host !== host;
  } catch {
    // `null` (sandboxed frames, some redirects) and malformed values are another origin.
    return true;
  }
}

/** The headers a key is read from, as a refusal names them (clients show only the message). */
const ACCEPTED_HEADERS = ['Authorization: Bearer <key>', 'X-API-Key', 'X-WORKFLOW-API-KEY', 'X-N8N-API-KEY'];
const ACCEPTED_TEXT = `${ACCEPTED_HEADERS.slice(0, -1).join(', ')} or ${ACCEPTED_HEADERS.at(-1)}`;
/**
 * Key headers of other gateways and clouds (Azure OpenAI, Google, API managers) that a client pointed
 * here may still send: never read, but named in the 401 so the caller sees why.
 */
const OTHER_KEY_HEADERS = [
  'api-key',
  'x-goog-api-key',
  'ocp-apim-subscription-key',
  'x-auth-token',
  'apikey',
];

/** 401 for a request that sent no key this platform reads, naming the headers it does read. */
function missingKey(headers: FastifyRequest['headers']): AppError {
  const other = OTHER_KEY_HEADERS.find((name) => typeof headers[name] === 'string');
  const message = other
    ? `API key is missing: the ${other} header is not read here; send the key in ${ACCEPTED_TEXT}`
    : `API key is missing: send it in ${ACCEPTED_TEXT}`;
  return new AppError('UNAUTHORIZED', message, { acceptedHeaders: ACCEPTED_HEADERS });
}

/** Where a credential is read, in order: Authorization Bearer, X-WORKFLOW-API-KEY, X-N8N-API-KEY (n8n's clients), X-API-Key. */
function readCredential(headers: FastifyRequest['headers']): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1])
      throw new AppError(
        'UNAUTHORIZED',
        `Authorization header must be "Bearer <API key or token>" (the key may also come in ${ACCEPTED_HEADERS.slice(1).join(', ')})`,
        { acceptedHeaders: ACCEPTED_HEADERS },
      );
    return match[1];
  }
  for (const name of ['x-workflow-api-key', 'x-n8n-api-key', 'x-api-key']) {
    const value = headers[name];
    if (typeof value === 'string' && value.length > 0) return value.trim();
  }
  return null;
}

export class PlatformAuthenticator implements Authenticator {
  private sessions: { verifier: SessionVerifier; publicOrigin: string } | null = null;

  constructor(
    private readonly keys: KeyVerifier,
    private readonly tokens: CustomerTokens,
  ) {}

  /** Accepts browser sessions (the portal module), checked against PUBLIC_URL's origin. */
  useSessions(verifier: SessionVerifier, publicUrl: string): void {
    this.sessions = { verifier, publicOrigin: new URL(publicUrl).origin };
  }

  /** An API key this process has verified before, without waiting; undefined otherwise. */
  authenticateCached(request: FastifyRequest): Principal | undefined {
    const credential = readCredential(request.headers);
    if (credential === null || !looksLikeKey(credential)) return undefined;
    return this.keys.cached(credential);
  }

  async authenticate(request: FastifyRequest): Promise<Principal> {
    const credential = readCredential(request.headers);
    if (credential === null) {
      // A key header wins: the cookie is read only when no key is sent.
      const session = this.sessions ? readCookie(request.headers.cookie, SESSION_COOKIE) : null;
      if (session !== null) return this.verifySession(session, request);
      throw missingKey(request.headers);
    }
    if (looksLikeKey(credential)) return this.verifyApiKey(credential);
    if (JWT_SHAPE.test(credential)) return this.verifyToken(credential);
    throw new AppError('UNAUTHORIZED', 'API key is malformed');
  }

  /**
   * The signed-in member of a request's session cookie, whatever key headers say, for a public route
   * that must know who the browser is (an OAuth2 consent link bound to its member); null when there is
   * no valid session, or sessions are off.
   */
  async sessionOf(request: FastifyRequest): Promise<Principal | null> {
    const session = this.sessions ? readCookie(request.headers.cookie, SESSION_COOKIE) : null;
    if (session === null) return null;
    try {
      return await this.verifySession(session, request);
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
  }

  /** Verifies a raw API key value (also used by webhooks that take `X-API-Key`). */
  async verifyApiKey(value: string): Promise<Principal> {
    return this.keys.verifyValue(value);
  }

  /** A session cookie: from this origin only, and with the CSRF token on anything that changes state. */
  private async verifySession(token: string, request: FastifyRequest): Promise<Principal> {
    const sessions = this.sessions;
    if (!sessions) throw new AppError('UNAUTHORIZED', 'API key is missing');
    if (crossOrigin(request, sessions.publicOrigin))
      throw new AppError('FORBIDDEN', 'Cross-origin request refused: Origin does not match this server');
    const { principal, csrfToken } = await sessions.verifier.verify(token, request);
    if (!SAFE_METHODS.has(request.method)) {
      const given = request.headers[CSRF_HEADER];
      if (typeof given !== 'string' || !sameSecret(given, csrfToken))
        throw new AppError(
          'FORBIDDEN',
          'CSRF token is missing or wrong: send the X-CSRF-Token header the session gave',
        );
    }
    return principal;
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
