/** The portal's one way to the platform's API: same origin, the session cookie, CSRF on writes. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called on a 401 of a signed-in call: the session ended (expired, revoked, signed out elsewhere). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

interface ErrorFields {
  message?: unknown;
  code?: unknown;
  details?: unknown;
  error?: unknown;
}

/**
 * The words of an error body: the platform's `{ code, message, details }`, or the nested
 * `{ error: { message } }` of the OpenAI-compatible routes, naming offending fields when listed.
 */
export function errorFrom(status: number, body: unknown): ApiError {
  const b = (body && typeof body === 'object' ? body : {}) as ErrorFields;
  const nested = (b.error && typeof b.error === 'object' ? b.error : {}) as ErrorFields;
  const message = typeof b.message === 'string' ? b.message : nested.message;
  const code = typeof b.code === 'string' ? b.code : typeof nested.code === 'string' ? nested.code : '';
  const details = (b.details && typeof b.details === 'object' ? b.details : {}) as Record<string, unknown>;
  let text = typeof message === 'string' && message ? message : `The server answered ${status}`;
  const fields = details.fields;
  if (Array.isArray(fields) && fields.length > 0 && !text.includes(':')) {
    const named = fields
      .slice(0, 5)
      .map((f: { field?: unknown; message?: unknown }) => `${String(f.field)} ${String(f.message)}`);
    text = `${text}: ${named.join('; ')}`;
  }
  return new ApiError(status, code, text, details);
}

export interface CallOptions {
  body?: unknown;
  /** false for the sign-in calls themselves: their 401 is a wrong password, not an ended session. */
  session?: boolean;
  signal?: AbortSignal;
}

/** The raw response of a call (streams read it themselves); throws ApiError on 4xx/5xx. */
export async function send(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK', 'The server could not be reached; check the connection and retry');
  }
  if (response.ok) return response;
  const body = await response.json().catch(() => null);
  const error = errorFrom(response.status, body);
  if (response.status === 401 && options.session !== false) onUnauthorized?.();
  throw error;
}

/** A JSON call; 204 gives undefined. */
export async function api<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const response = await send(method, path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** A query string from defined values only. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}
