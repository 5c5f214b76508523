import { redactSecrets, redactValues } from '../../../core/redact.js';
import { NodeOperationError } from './node-type.js';

/**
 * Fields that say where and how to connect, never what proves it: an error naming the host, port or
 * database stays readable. Every other field counts as a secret (a field list of secrets would leak
 * the one it forgot).
 */
const PLAIN_FIELDS = new Set([
  'host',
  'port',
  'database',
  'region',
  'ssl',
  'sslmode',
  'allowUnauthorizedCerts',
  'ignoreSSLIssues',
  'authentication',
  'grantType',
  'authUrl',
  'accessTokenUrl',
  'scope',
  'authQueryParameters',
  'sendIn',
  'headerPrefix',
  'protocol',
  'secure',
  'algorithm',
  'keyType',
]);

/** Where-to fields by their name's end (`qdrantUrl`, `baseUrl`, `s3Endpoint`, `resourceName`, …). */
const PLAIN_FIELD_END = /(?:url|uri|endpoint|host|domain|region|server|resourcename|apiversion)$/i;

/** Switches and port numbers: a value like these is not a secret, and erasing it would erase words. */
const PLAIN_VALUE = /^(?:true|false|\d{1,5})$/;

/** Fields whose value is a secret whatever it looks like (a PIN of four digits is still one). */
const SECRET_FIELD = /pass|secret|token|key|pin|auth|signature|cookie|session/i;

const isPlainField = (field: string) =>
  PLAIN_FIELDS.has(field) || (!SECRET_FIELD.test(field) && PLAIN_FIELD_END.test(field));

/** A percent-decoded value, or the value itself when it holds a stray `%`. */
function decodedOrSame(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * What a where-to value may still carry: a URL's password (or a user name alone, a token's usual
 * place: `https://token@host`) and its query's values (`?key=…`).
 */
function secretsInAddress(value: string, out: string[]): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return;
  }
  if (url.password) out.push(url.password, decodedOrSame(url.password));
  if (url.username && !url.password) out.push(url.username, decodedOrSame(url.username));
  for (const query of url.searchParams.values()) out.push(query);
}

/**
 * The secrets a credential injects into a request: its string values but the plain ones above (of
 * those, only what a URL carries), and those inside an httpCustomAuth `json` (headers, query, body)
 * and an httpMultipleHeadersAuth `headers`, as sent.
 */
export function credentialSecrets(data: Record<string, unknown> | null | undefined): string[] {
  const out: string[] = [];
  for (const [field, value] of Object.entries(data ?? {})) {
    if (typeof value !== 'string' || (PLAIN_VALUE.test(value) && !SECRET_FIELD.test(field))) continue;
    if (isPlainField(field)) secretsInAddress(value, out);
    else out.push(value);
  }
  for (const field of ['json', 'headers', 'oauthTokenData']) {
    const text = data?.[field];
    if (typeof text !== 'string') continue;
    try {
      collect(JSON.parse(text), out);
    } catch {
      // Not JSON: its whole text is already in the list.
    }
  }
  // A Basic header carries user:password in base64; redactSecrets also searches each value's base64.
  if (typeof data?.user === 'string' && typeof data.password === 'string')
    out.push(`${data.user}:${data.password}`);
  return out;
}

function collect(value: unknown, out: string[], depth = 0): void {
  if (depth > 5) return;
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object')
    for (const v of Object.values(value)) collect(v, out, depth + 1);
}

/**
 * A node failure without the secrets its request carried: a server that echoes the Authorization
 * header (or a key in a query string) in its error body must not put it in the execution's error,
 * which every reader of the workflow's executions sees.
 */
export function withoutSecrets(
  error: unknown,
  secrets: readonly string[],
  options: { shapes?: boolean } = {},
): unknown {
  if (secrets.length === 0) return error;
  // A thrown string is recorded as it is: redacted like a message.
  if (typeof error === 'string')
    return options.shapes === false ? redactValues(error, secrets) : redactSecrets(error, secrets);
  if (!(error instanceof Error)) return error;
  const redact = (text: string) =>
    options.shapes === false ? redactValues(text, secrets) : redactSecrets(text, secrets);
  const message = redact(error.message);
  if (error instanceof NodeOperationError) {
    const description = error.description === undefined ? undefined : redact(error.description);
    if (message === error.message && description === error.description) return error;
    return new NodeOperationError(message, {
      ...(description !== undefined ? { description } : {}),
      ...(error.problems ? { problems: error.problems } : {}),
      ...(error.logs ? { logs: error.logs } : {}),
    });
  }
  if (message === error.message) return error;
  const clean = new Error(message);
  clean.name = error.name;
  return clean;
}

/**
 * Items a node that continues on fail made of its errors (n8n's `{error: message}`, or `{message,
 * error: {message, description}}`), their error texts redacted of `secrets`; other items as they are.
 */
export function withoutSecretsInErrorItems<T extends { json: Record<string, unknown> }>(
  outputs: T[][],
  secrets: readonly string[],
): T[][] {
  const clean = (value: unknown, depth = 0): unknown => {
    if (typeof value === 'string') return redactValues(value, secrets);
    if (depth > 3 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v, depth + 1)]));
  };
  return outputs.map((items) =>
    items.map((item) => {
      if (!Object.hasOwn(item.json, 'error')) return item;
      const json: Record<string, unknown> = { ...item.json, error: clean(item.json.error) };
      if (typeof json.message === 'string') json.message = redactValues(json.message, secrets);
      return { ...item, json };
    }),
  );
}
