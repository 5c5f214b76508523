/**
 * Parsing a condition's value to its operator's type, as n8n's filter does: `strict` refuses a value of
 * another JavaScript type, loose converts where it can (`"3"` → 3, `"true"` → true, `"[1]"` → [1]).
 * Dates become `Date`s (n8n uses Luxon; ISO, HTTP, RFC 2822 and SQL forms are read alike).
 */

export type Parsed = { valid: true; value: unknown } | { valid: false };

const ok = (value: unknown): Parsed => ({ valid: true, value });
const invalid: Parsed = { valid: false };

export function parseFilterValue(value: unknown, type: string, strict: boolean, version: number): Parsed {
  if (type === 'any' || value === null || value === undefined) return ok(value);
  if (type === 'boolean' && !strict) {
    if (version >= 2) {
      const parsed = toBoolean(value);
      if (parsed.valid) return parsed;
    }
    return ok(Boolean(value));
  }
  if (type === 'number') {
    if (Number.isNaN(value)) return ok(value);
    const emptyString = typeof value === 'string' && value.trim() === '';
    const emptyArray = Array.isArray(value) && value.length === 0;
    if ((emptyString || emptyArray) && version >= 3) return ok(null);
  }
  return parseTyped(value, type, strict);
}

function parseTyped(value: unknown, type: string, strict: boolean): Parsed {
  switch (type) {
    case 'string':
      if (strict && typeof value !== 'string') return invalid;
      return ok(typeof value === 'object' ? JSON.stringify(value) : String(value));
    case 'number': {
      if (strict && typeof value !== 'number') return invalid;
      const n = Number(value);
      return Number.isNaN(n) ? invalid : ok(n);
    }
    case 'boolean':
      if (strict && typeof value !== 'boolean') return invalid;
      return toBoolean(value);
    case 'dateTime':
      return toDate(value);
    case 'object':
      if (strict && typeof value !== 'object') return invalid;
      return toObject(value);
    case 'array':
      if (strict && !Array.isArray(value)) return invalid;
      return toArray(value);
    default:
      return ok(value);
  }
}

/** `true`/`false` in any case, and 1/0 (also as strings); anything else is not a boolean. */
export function toBoolean(value: unknown): Parsed {
  if (typeof value === 'boolean') return ok(value);
  if (typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase())) {
    return ok(value.toLowerCase() === 'true');
  }
  if (!(typeof value === 'string' && value.trim() === '')) {
    const n = Number(value);
    if (n === 0) return ok(false);
    if (n === 1) return ok(true);
  }
  return invalid;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A date in any form n8n reads; a date without a time is local midnight, as Luxon has it. */
function toDate(value: unknown): Parsed {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? invalid : ok(value);
  const text = String(value).trim();
  const day = DATE_ONLY.exec(text);
  if (day) return ok(new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
  const millis = Date.parse(text);
  return Number.isNaN(millis) ? invalid : ok(new Date(millis));
}

/** An array, or a string holding one in JSON (single quotes accepted, as n8n does). */
export function toArray(value: unknown): Parsed {
  if (Array.isArray(value)) return ok(value);
  const text = String(value);
  for (const candidate of [text, text.replace(/'/g, '"')]) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      return Array.isArray(parsed) ? ok(parsed) : invalid;
    } catch {
      // try the next form
    }
  }
  return invalid;
}

/** A plain object, or a string holding one in JSON or JavaScript object notation (`{a: 1}`). */
export function toObject(value: unknown): Parsed {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return ok(value);
  const parsed = parseLooseJson(String(value));
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? ok(parsed) : invalid;
}

/**
 * JSON, else JavaScript object notation made JSON: single quotes and unquoted keys, as n8n's
 * `jsonParse(…, { acceptJSObject: true })` reads them. Returns undefined when neither parses.
 */
export function parseLooseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      const json = text
        .replace(/'([^'\\]*(?:\\.[^'\\]*)*)'/g, (_, inner: string) =>
          JSON.stringify(inner.replace(/\\'/g, "'")),
        )
        .replace(/([{,]\s*)([A-Za-z_$][\w$]*)(\s*:)/g, '$1"$2"$3');
      return JSON.parse(json);
    } catch {
      return undefined;
    }
  }
}
