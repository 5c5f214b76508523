import type { OutboundHttp } from '../../../../core/http/outbound.js';
import type { OAuth2Config } from './config.js';

/**
 * The token answer as n8n keeps it in `oauthTokenData` (the provider's fields), with `expires_at`
 * added here: when `expires_in` says the access token ends, so it is renewed before a call fails.
 */
export interface TokenData {
  access_token: string;
  token_type?: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  /** ISO time; absent when the provider does not say. */
  expires_at?: string;
  [field: string]: unknown;
}

/** The token endpoint refused or failed; the message names the provider's error code, never a secret. */
export class TokenEndpointError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
    readonly oauthError: string | null,
  ) {
    super(message);
    this.name = 'TokenEndpointError';
  }
}

/** Bounds of one token request: its time, its answer's size, no redirects (a token URL is exact). */
export const TOKEN_REQUEST_LIMITS = { timeoutMs: 15_000, maxResponseBytes: 64 * 1024 };

/** Fields of the answer kept (others are the provider's and may be large: an id_token is kept too). */
const KEPT = ['access_token', 'token_type', 'refresh_token', 'expires_in', 'scope', 'id_token'];
/** An OAuth error code as providers spell them (`invalid_grant`); anything else is not echoed. */
const ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * POSTs a grant to the credential's token URL through the outbound guard, the client authenticated
 * as n8n's `authentication` says (Basic header or body fields). Answers JSON or a form body (some
 * providers answer `application/x-www-form-urlencoded`, as n8n's client accepts).
 */
export async function requestToken(
  http: OutboundHttp,
  config: OAuth2Config,
  grant: Record<string, string>,
  now: Date,
): Promise<TokenData> {
  const form: Record<string, string> = { ...grant };
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json, application/x-www-form-urlencoded',
  };
  if (config.authentication === 'header' && config.clientSecret !== '') {
    headers.authorization = `Basic ${Buffer.from(`${config.clientId}:${config.clientSecret}`).toString('base64')}`;
  } else {
    form.client_id = config.clientId;
    if (config.clientSecret !== '') form.client_secret = config.clientSecret;
  }
  let res: Awaited<ReturnType<OutboundHttp>>;
  try {
    res = await http({
      method: 'POST',
      url: config.accessTokenUrl,
      headers,
      body: new URLSearchParams(form).toString(),
      timeoutMs: TOKEN_REQUEST_LIMITS.timeoutMs,
      maxResponseBytes: TOKEN_REQUEST_LIMITS.maxResponseBytes,
      maxRedirects: 0,
    });
  } catch (error) {
    // The guard's refusal or a timeout: its own words name the host or the limit, not the form.
    throw new TokenEndpointError(
      `The OAuth2 token endpoint could not be reached: ${(error as Error).message}`,
      null,
      null,
    );
  }
  const body = parseAnswer(res.body, res.headers['content-type']);
  const code = typeof body?.error === 'string' && ERROR_CODE.test(body.error) ? body.error : null;
  const token = body?.access_token;
  if (res.status < 200 || res.status >= 300 || typeof token !== 'string' || token === '') {
    throw new TokenEndpointError(
      `The OAuth2 token endpoint refused the ${grant.grant_type} grant (HTTP ${res.status}${code ? `, ${code}` : ''})`,
      res.status,
      code,
    );
  }
  const data: TokenData = { access_token: token };
  for (const field of KEPT) {
    const v = body?.[field];
    if (field !== 'access_token' && (typeof v === 'string' || typeof v === 'number'))
      (data as Record<string, unknown>)[field] = field === 'expires_in' ? Number(v) : v;
  }
  const seconds = Number(data.expires_in);
  if (Number.isFinite(seconds) && seconds > 0)
    data.expires_at = new Date(now.getTime() + seconds * 1000).toISOString();
  return data;
}

function parseAnswer(text: string, contentType: string | undefined): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    if (!contentType?.includes('x-www-form-urlencoded')) return null;
    return Object.fromEntries(new URLSearchParams(text));
  }
}

/** A token still usable at `now` (30 s of margin: it must last through the request). */
export function isFresh(token: TokenData | null, now: Date): token is TokenData {
  if (!token?.access_token) return false;
  return token.expires_at === undefined || Date.parse(token.expires_at) - 30_000 > now.getTime();
}

/** A refreshed answer over the previous one: a provider that does not rotate keeps its refresh token. */
export function mergeRefreshed(previous: TokenData, next: TokenData): TokenData {
  const merged: TokenData = { ...previous, ...next };
  if (next.expires_at === undefined) delete merged.expires_at;
  if (next.expires_in === undefined) delete merged.expires_in;
  return merged;
}

/** The stored token data, or null when absent or unreadable. */
export function readTokenData(text: string | undefined): TokenData | null {
  if (!text) return null;
  try {
    const parsed = JSON.parse(text) as TokenData;
    return typeof parsed?.access_token === 'string' ? parsed : null;
  } catch {
    return null;
  }
}
