import { createHash, createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { pem } from '../../../credentials/jwt.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';
import { GOOGLE_TIMEOUT_MS, googleError, parseJson } from './transport.js';

/** n8n's token endpoint for Google's JWT-bearer grant (service accounts). */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The scopes n8n's Google Sheets node asks a service account's token for. */
export const SHEETS_SCOPES = [
  'https://www.googleapis.com/auth/drive.file',
  'https://www.googleapis.com/auth/spreadsheets',
  'https://www.googleapis.com/auth/drive.metadata',
];

/** Tokens kept at most (one per service account and subject); the oldest goes first. */
const MAX_CACHED = 200;
/** A token is renewed this long before Google says it expires, so no call carries a dying one. */
const EXPIRY_MARGIN_MS = 60_000;
const cache = new Map<string, { token: string; expiresAt: number }>();

/** n8n's `googleApi` credential: a service account's email and key, and whom it acts for. */
export interface ServiceAccount {
  email: string;
  privateKey: string;
  /** Domain-wide delegation: the user the token acts as. */
  subject: string;
}

export function serviceAccountOf(data: Record<string, string | undefined>): ServiceAccount {
  const email = (data.email ?? '').trim();
  // n8n's form stores the key with literal `\n`s when pasted from the JSON key file.
  const privateKey = (data.privateKey ?? '').replace(/\\n/g, '\n').trim();
  if (!email || !privateKey)
    throw new NodeOperationError('The googleApi credential needs the service account email and private key');
  const impersonate = data.inpersonate ?? data.impersonate;
  const delegated = (data.delegatedEmail ?? '').trim();
  const subject = delegated && impersonate !== 'false' ? delegated : email;
  return { email, privateKey, subject };
}

/** Forgets every cached token (tests). */
export function clearServiceAccountTokens(): void {
  cache.clear();
}

/**
 * A service account's access token (n8n's getGoogleAccessToken): an RS256-signed assertion exchanged
 * at Google's token endpoint, cached until shortly before it expires.
 */
export async function serviceAccountToken(
  deps: Pick<EngineDeps, 'http' | 'now'>,
  account: ServiceAccount,
  deadlineAt: number | undefined,
): Promise<string> {
  const key = createHash('sha256')
    .update(`${account.email}\n${account.subject}\n${account.privateKey}`)
    .digest('hex');
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.expiresAt > now) return hit.token;

  let signingKey: ReturnType<typeof createPrivateKey>;
  try {
    signingKey = createPrivateKey(pem(account.privateKey));
  } catch {
    throw new NodeOperationError("The googleApi credential's private key is not a PEM private key");
  }
  const iat = Math.floor(now / 1000);
  const assertion = await new SignJWT({ scope: SHEETS_SCOPES.join(' ') })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(account.email)
    .setSubject(account.subject)
    .setAudience(GOOGLE_TOKEN_URL)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3_600)
    .sign(signingKey);
  const left = deadlineAt !== undefined ? deadlineAt - now : GOOGLE_TIMEOUT_MS;
  if (left <= 0) throw new NodeOperationError('The execution has no time left to ask Google for a token');
  let res: Awaited<ReturnType<EngineDeps['http']>>;
  try {
    res = await deps.http({
      method: 'POST',
      url: GOOGLE_TOKEN_URL,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion,
      }).toString(),
      timeoutMs: Math.min(GOOGLE_TIMEOUT_MS, left),
      maxRedirects: 0,
      maxResponseBytes: 64 * 1024,
    });
  } catch (err) {
    throw new NodeOperationError(`Google's token endpoint could not be reached: ${(err as Error).message}`);
  }
  const body = parseJson(res.body) as
    | { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown }
    | undefined;
  if (res.status < 200 || res.status >= 300 || typeof body?.access_token !== 'string') {
    if (body && typeof body.error === 'string')
      throw new NodeOperationError(
        `Google refused the service account's token request: ${body.error}${
          typeof body.error_description === 'string' ? ` (${body.error_description})` : ''
        }`,
        { description: `The token endpoint answered ${res.status}` },
      );
    throw googleError(res, 'the token request');
  }
  const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3_600;
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, { token: body.access_token, expiresAt: now + seconds * 1000 - EXPIRY_MARGIN_MS });
  return body.access_token;
}
