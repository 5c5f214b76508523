/**
 * The structured fields of n8n's generic HTTP credentials, read the same way when a credential is saved
 * (so a bad one is a 400, not a failure at run time) and when a request applies it.
 */

/** The fields of a type whose value may be given as a JSON object (stored as its JSON text). */
export const STRUCTURED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  httpMultipleHeadersAuth: ['headers'],
  httpCustomAuth: ['json'],
};

/** A header name as HTTP allows it (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value without line breaks or NUL (no header injection). */
const HEADER_VALUE = /^[^\r\n\0]*$/;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** n8n's Multiple Headers Auth `headers` (`{values: [{name, value}]}`) as header pairs; throws naming the problem. */
export function multipleHeaders(text: string): Array<[string, string]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('must be JSON: {"values": [{"name": ..., "value": ...}]}');
  }
  const values = (parsed as { values?: unknown } | null)?.values;
  if (!Array.isArray(values) || values.length === 0)
    throw new Error('must hold at least one header in `values`');
  return values.map((row, i) => {
    const { name, value } = (row ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || !HEADER_NAME.test(name))
      throw new Error(`values[${i}].name must be a header name`);
    const text = typeof value === 'string' ? value : value === undefined ? '' : String(value);
    if (!HEADER_VALUE.test(text)) throw new Error(`values[${i}].value must not hold line breaks`);
    return [name, text];
  });
}

export interface CustomAuth {
  headers: Array<[string, string]>;
  qs: Record<string, unknown>;
  body: Record<string, unknown> | null;
}

/** n8n's Custom Auth `json`: an object of `headers`, `qs` and `body` (each an object, all optional); `strict` on save. */
export function customAuth(text: string, strict = false): CustomAuth {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text || '{}');
  } catch {
    throw new Error('Invalid Custom Auth JSON');
  }
  if (!isObject(parsed)) throw new Error('Custom Auth JSON must be an object');
  // n8n ignores other keys when it applies the credential; saving one is refused (a typo would send nothing).
  const unknown = Object.keys(parsed).filter((k) => k !== 'headers' && k !== 'qs' && k !== 'body');
  if (strict && unknown.length > 0)
    throw new Error(`Custom Auth JSON has only headers, qs and body (not ${unknown.join(', ')})`);
  for (const part of ['headers', 'qs', 'body'] as const)
    if (parsed[part] !== undefined && !isObject(parsed[part]))
      throw new Error(`Custom Auth JSON's ${part} must be an object`);
  const headers = Object.entries((parsed.headers ?? {}) as Record<string, unknown>).map(
    ([name, value]): [string, string] => {
      const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
      if (!HEADER_NAME.test(name)) throw new Error(`Custom Auth header '${name}' is not a header name`);
      if (!HEADER_VALUE.test(text)) throw new Error(`Custom Auth header '${name}' must not hold line breaks`);
      return [name, text];
    },
  );
  return {
    headers,
    qs: safe((parsed.qs ?? {}) as Record<string, unknown>),
    body: parsed.body === undefined ? null : safe(parsed.body as Record<string, unknown>),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Top-level keys that would reach an object's prototype when merged are dropped. */
function safe(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !UNSAFE_KEYS.has(k)));
}
