/**
 * n8n's CORS on webhook paths (its webhook request handler): only when the request carries an Origin,
 * the caller's origin is echoed when `allowedOrigins` is `*` or lists it, with the path's methods; a
 * preflight adds `max-age` and echoes the headers asked for. An origin not listed gets no CORS
 * headers at all (n8n answers with its first listed origin instead: either way the browser refuses).
 * No `Access-Control-Allow-Credentials`, as in n8n: a page of another origin never gets an answer
 * that the browser sent with its cookies or cached basic-auth credentials.
 */

/** Most characters of `Access-Control-Request-Headers` echoed back (longer: not echoed). */
const MAX_REQUESTED_HEADERS = 1_000;
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

export interface CorsRule {
  /** `*` or comma-separated origins (blanks ignored); `null`: none (no CORS headers at all). */
  allowedOrigins: string | null;
  /** The methods the path answers (OPTIONS is added). */
  methods: readonly string[];
}

export function corsHeaders(
  rule: CorsRule,
  origin: string | undefined,
  preflight?: { requestedHeaders: string | undefined },
): Record<string, string> {
  if (!origin || rule.allowedOrigins === null) return {};
  const allowed = rule.allowedOrigins
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (allowed.length > 0 && !allowed.includes('*') && !allowed.includes(origin)) return {};
  const headers: Record<string, string> = {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ['OPTIONS', ...rule.methods.filter((m) => m !== 'OPTIONS')].join(', '),
    vary: 'Origin',
  };
  if (preflight) {
    headers['access-control-max-age'] = '300';
    const asked = preflight.requestedHeaders?.trim();
    if (asked && asked.length <= MAX_REQUESTED_HEADERS && HEADER_LIST.test(asked))
      headers['access-control-allow-headers'] = asked;
  }
  return headers;
}
