import { createHmac, timingSafeEqual } from 'node:crypto';
import { hasScope, hasService, type Principal } from '../../../core/auth/principal.js';
import { AppError, isAppError } from '../../../core/errors.js';
import { limitHeaders, tooMany, type UsageRecorder } from '../../../core/http/auth-hook.js';
import type { Limiter } from '../../../core/limits/limiter.js';
import { sameSecret } from '../../../core/secrets.js';
import { verifyJwt } from '../credentials/jwt.js';
import type { WebhookNodeInfo } from '../engine/index.js';
import { headerOf as header, type WebhookCall } from './call.js';

export interface WebhookAuthDeps {
  reveal(accountId: string, ref: string): Promise<{ type: string; data: Record<string, string> } | null>;
  verifyApiKey(value: string): Promise<Principal>;
  /** The shared limiter and usage ledger: a webhook call with a key counts as one request of it. */
  limiter: Limiter;
  usage: UsageRecorder;
  now(): Date;
  /** How far a signed `X-Store-Timestamp` may be from now, in seconds. */
  hmacToleranceSeconds: number;
}

/** Header and query names that held a secret: kept out of the execution's data. */
export interface Redactions {
  headers: string[];
  query: string[];
}

/** Who called, as far as the webhook's authentication can tell, and what to add to the answer. */
export interface WebhookCaller {
  redact: Redactions;
  /**
   * The caller's identity for deduplication: the key id (platform key), the credential (basic,
   * header, query, HMAC: whoever holds it) or the client address (no authentication).
   */
  identity: string;
  /** `X-RateLimit-*` of the key's daily quota (platform-key webhooks). */
  headers: Record<string, string>;
  /** jwtAuth: the token's claims, which n8n puts in the trigger item as `jwtPayload`. */
  jwtPayload?: Record<string, unknown>;
}

const missing = (what: string, headers: Record<string, string> = {}) =>
  new AppError('UNAUTHORIZED', `Missing webhook credentials: ${what}`, {}, headers);
const wrong = (what: string) => new AppError('FORBIDDEN', `Invalid webhook credentials: ${what}`);

/** Equal without telling by timing how much matched, nor how long the secret is. */

/**
 * A platform key on a webhook is held to what it would be on the API: its account, the workflow
 * service with `workflow:write` (starting an execution is a write), its address rules and its daily
 * quota, counted in the same ledger with the same headers.
 */
async function authenticateKey(
  call: WebhookCall,
  accountId: string,
  deps: WebhookAuthDeps,
): Promise<WebhookCaller> {
  const value = header(call, 'x-api-key');
  if (!value) throw missing('X-API-Key header');
  let principal: Principal;
  try {
    principal = await deps.verifyApiKey(value);
  } catch (error) {
    if (isAppError(error) && error.code === 'UNAUTHORIZED') throw wrong('API key');
    throw error;
  }
  const { keyId, dailyQuota } = principal;
  let refusal: AppError | null = null;
  if (principal.accountId !== accountId || !hasService(principal, 'workflow')) {
    refusal = new AppError('FORBIDDEN', "This key may not start this account's workflows");
  } else if (!hasScope(principal, 'workflow', 'write')) {
    refusal = new AppError('FORBIDDEN', 'Missing scope workflow:write', { requiredScope: 'workflow:write' });
  } else if (principal.ipAllowed && !principal.ipAllowed(call.clientAddress)) {
    refusal = new AppError('FORBIDDEN', 'Client address is not allowed for this key', {
      ip: call.clientAddress,
    });
  }
  if (refusal) {
    // As on the API: a refused request shows the quota but does not use it.
    if (keyId && dailyQuota !== null)
      Object.assign(refusal.headers, limitHeaders(await deps.limiter.readDailyQuota(keyId, dailyQuota)));
    throw refusal;
  }
  const identity = `key:${keyId ?? principal.accountId}`;
  if (!keyId || dailyQuota === null) return { redact: none(), identity, headers: {} };
  const quota = await deps.limiter.hitDailyQuota(keyId, dailyQuota);
  deps.usage.record(principal, 'workflow', quota.allowed);
  if (!quota.allowed) throw tooMany(quota, 'Daily request quota');
  return { redact: none(), identity, headers: limitHeaders(quota) };
}

const none = (): Redactions => ({ headers: [], query: [] });

/**
 * HMAC of the raw body; with a timestamp header, of `{timestamp}.{raw body}` and only within the
 * tolerance, so a captured delivery cannot be replayed later (the timestamp cannot be stripped: the
 * signature would no longer match). `hmacRequireTimestamp` refuses deliveries without one.
 */
function checkHmac(call: WebhookCall, hook: WebhookNodeInfo, secret: string, deps: WebhookAuthDeps): void {
  const { hmacHeader, hmacTimestampHeader, hmacRequireTimestamp } = hook.options;
  const given = header(call, hmacHeader);
  if (!given) throw missing(`${hmacHeader} header`);
  const stamp = header(call, hmacTimestampHeader);
  if (stamp === undefined && hmacRequireTimestamp) throw missing(`${hmacTimestampHeader} header`);
  const mac = createHmac('sha256', secret);
  if (stamp !== undefined) {
    const seconds = /^\d{1,12}$/.test(stamp.trim()) ? Number(stamp.trim()) : Number.NaN;
    const skew = Math.abs(deps.now().getTime() / 1000 - seconds);
    if (!(skew <= deps.hmacToleranceSeconds)) {
      throw new AppError(
        'FORBIDDEN',
        `Invalid webhook credentials: ${hmacTimestampHeader} must be Unix seconds within ${deps.hmacToleranceSeconds} s of now`,
      );
    }
    mac.update(`${stamp.trim()}.`);
  }
  const expected = mac.update(call.rawBody).digest();
  const signature = Buffer.from(given.trim(), 'base64');
  // Length first: timingSafeEqual needs equal lengths, and a wrong length is no secret.
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
    throw wrong(`${hmacHeader} signature`);
  }
}

/**
 * The webhook node's own authentication. Missing credentials → 401, wrong ones → 403; either way
 * before any execution exists.
 */
export async function authenticateWebhook(
  call: WebhookCall,
  hook: WebhookNodeInfo,
  accountId: string,
  deps: WebhookAuthDeps,
): Promise<WebhookCaller> {
  if (hook.authentication === 'none')
    return { redact: none(), identity: `ip:${call.clientAddress}`, headers: {} };
  if (hook.authentication === 'apiKey') return authenticateKey(call, accountId, deps);
  const credential = hook.credentialId ? await deps.reveal(accountId, hook.credentialId) : null;
  // Activation checks the credential exists; deleted since → refuse rather than run unprotected.
  if (!credential) throw new AppError('SERVICE_UNAVAILABLE', "The webhook's credential is missing");
  const data = credential.data;
  const caller = (redact: Redactions): WebhookCaller => ({
    redact,
    identity: `credential:${hook.credentialId}`,
    headers: {},
  });
  switch (hook.authentication) {
    case 'basicAuth': {
      const value = header(call, 'authorization');
      const realm = { 'www-authenticate': 'Basic realm="Webhook"' };
      if (!value?.startsWith('Basic ')) throw missing('Basic authorization', realm);
      const decoded = Buffer.from(value.slice(6).trim(), 'base64').toString('utf8');
      if (!sameSecret(decoded, `${data.user}:${data.password}`)) throw wrong('user or password');
      return caller(none());
    }
    case 'headerAuth': {
      const name = data.name ?? '';
      const value = header(call, name);
      if (value === undefined || value === '') throw missing(`${name} header`);
      if (!sameSecret(value, data.value ?? '')) throw wrong(`${name} header`);
      return caller({ headers: [name.toLowerCase()], query: [] });
    }
    case 'bearerAuth': {
      // n8n's httpBearerAuth credential (the MCP Server Trigger): `Authorization: Bearer <token>`.
      const value = header(call, 'authorization');
      const token = value && /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1];
      if (!token) throw missing('Bearer token in the Authorization header');
      if (!sameSecret(token, data.token ?? '')) throw wrong('Bearer token');
      return caller({ headers: ['authorization'], query: [] });
    }
    case 'queryAuth': {
      const name = data.name ?? '';
      const value = call.query[name];
      if (typeof value !== 'string' || value === '') throw missing(`query parameter ${name}`);
      if (!sameSecret(value, data.value ?? '')) throw wrong(`query parameter ${name}`);
      return caller({ headers: [], query: [name] });
    }
    case 'hmac':
      checkHmac(call, hook, data.secret ?? '', deps);
      return caller(none());
    case 'jwtAuth': {
      const value = header(call, 'authorization');
      const token = value && /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1];
      if (!token) throw missing('Bearer token in the Authorization header');
      let claims: Record<string, unknown>;
      try {
        claims = await verifyJwt(data, token);
      } catch {
        throw wrong('JWT (signature, algorithm or expiry)');
      }
      return { ...caller({ headers: ['authorization'], query: [] }), jwtPayload: claims };
    }
    default:
      throw new AppError('INTERNAL_ERROR', `Unknown webhook authentication '${hook.authentication}'`);
  }
}
