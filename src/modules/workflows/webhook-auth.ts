import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hasService, type Principal } from '../../core/auth/principal.js';
import { AppError, isAppError } from '../../core/errors.js';
import type { WebhookNodeInfo } from './engine/index.js';

export interface WebhookAuthDeps {
  reveal(accountId: string, ref: string): Promise<{ type: string; data: Record<string, string> } | null>;
  verifyApiKey(value: string): Promise<Principal>;
}

/** Header and query names that held a secret: kept out of the execution's data. */
export interface Redactions {
  headers: string[];
  query: string[];
}

const missing = (what: string, headers: Record<string, string> = {}) =>
  new AppError('UNAUTHORIZED', `Missing webhook credentials: ${what}`, {}, headers);
const wrong = (what: string) => new AppError('FORBIDDEN', `Invalid webhook credentials: ${what}`);

/** Equal without telling by timing how much matched, nor how long the secret is. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The webhook node's own authentication. Missing credentials → 401, wrong ones → 403; either way
 * before any execution exists.
 */
export async function authenticateWebhook(
  request: FastifyRequest,
  rawBody: Buffer,
  hook: WebhookNodeInfo,
  accountId: string,
  deps: WebhookAuthDeps,
): Promise<Redactions> {
  const none: Redactions = { headers: [], query: [] };
  if (hook.authentication === 'none') return none;
  if (hook.authentication === 'apiKey') {
    const value = header(request, 'x-api-key');
    if (!value) throw missing('X-API-Key header');
    let principal: Principal;
    try {
      principal = await deps.verifyApiKey(value);
    } catch (error) {
      if (isAppError(error) && error.code === 'UNAUTHORIZED') throw wrong('API key');
      throw error;
    }
    if (principal.accountId !== accountId || !hasService(principal, 'workflow')) {
      throw new AppError('FORBIDDEN', "This key may not start this account's workflows");
    }
    if (principal.ipAllowed && !principal.ipAllowed(request.ip)) {
      throw new AppError('FORBIDDEN', 'Client address is not allowed for this key', { ip: request.ip });
    }
    return none;
  }
  const credential = hook.credentialId ? await deps.reveal(accountId, hook.credentialId) : null;
  // Activation checks the credential exists; deleted since → refuse rather than run unprotected.
  if (!credential) throw new AppError('SERVICE_UNAVAILABLE', "The webhook's credential is missing");
  const data = credential.data;
  switch (hook.authentication) {
    case 'basicAuth': {
      const value = header(request, 'authorization');
      const realm = { 'www-authenticate': 'Basic realm="Webhook"' };
      if (!value?.startsWith('Basic ')) throw missing('Basic authorization', realm);
      const decoded = Buffer.from(value.slice(6).trim(), 'base64').toString('utf8');
      if (!sameSecret(decoded, `${data.user}:${data.password}`)) throw wrong('user or password');
      return none;
    }
    case 'headerAuth': {
      const name = data.name ?? '';
      const value = header(request, name);
      if (value === undefined || value === '') throw missing(`${name} header`);
      if (!sameSecret(value, data.value ?? '')) throw wrong(`${name} header`);
      return { headers: [name.toLowerCase()], query: [] };
    }
    case 'queryAuth': {
      const name = data.name ?? '';
      const query = request.query as Record<string, unknown>;
      const value = query[name];
      if (typeof value !== 'string' || value === '') throw missing(`query parameter ${name}`);
      if (!sameSecret(value, data.value ?? '')) throw wrong(`query parameter ${name}`);
      return { headers: [], query: [name] };
    }
    case 'hmac': {
      const given = header(request, hook.options.hmacHeader);
      if (!given) throw missing(`${hook.options.hmacHeader} header`);
      const expected = createHmac('sha256', data.secret ?? '')
        .update(rawBody)
        .digest();
      const signature = Buffer.from(given.trim(), 'base64');
      // Length first: timingSafeEqual needs equal lengths, and a wrong length is no secret.
      if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
        throw wrong(`${hook.options.hmacHeader} signature`);
      }
      return none;
    }
    default:
      throw new AppError('INTERNAL_ERROR', `Unknown webhook authentication '${hook.authentication}'`);
  }
}
