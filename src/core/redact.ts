/**
 * One way to keep secrets out of what callers and logs see: replace every known secret (a provider
 * key, a credential's values, the values of Authorization / X-API-Key headers) in text that came
 * from elsewhere (an upstream's error body), drop bearer-looking tokens, and keep it short.
 */

export const REDACTED = '[redacted]';

/** Values shorter than this are not searched for (a 1-character "secret" would erase the text). */
const MIN_SECRET_LENGTH = 4;
/** How much of an upstream's own message a caller may see. */
const MAX_CAUSE_CHARS = 200;

/** Headers whose values are secrets wherever they appear. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie']);

/**
 * Tokens that look like credentials even when nobody told us their value: `Bearer …`/`Basic …`,
 * `sk-…`-style provider keys, and `key=…`/`token: …` pairs.
 */
const SECRET_SHAPES: readonly RegExp[] = [
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi,
  /\b(?:sk|pk|rk|gsk|xai|key)[-_][A-Za-z0-9_-]{8,}/g,
  /\b((?:api[_-]?key|access[_-]?token|secret|password|token)["']?\s*[:=]\s*["']?)[^\s"',;&]{4,}/gi,
];

/** Secret values worth searching for: strings long enough, longest first (so a key's prefix is not left). */
function usable(secrets: Iterable<string | null | undefined>): string[] {
  const out = new Set<string>();
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) out.add(s);
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every given secret, its URL-encoded and base64 forms, and anything shaped like a
 * credential replaced by `[redacted]`.
 */
export function redactSecrets(text: string, secrets: Iterable<string | null | undefined> = []): string {
  let out = redactValues(text, secrets);
  for (const shape of SECRET_SHAPES)
    out = out.replace(shape, (_match, lead: unknown) => {
      // Without a group the second argument is the offset: only a string is a kept prefix.
      if (typeof lead !== 'string') return REDACTED;
      return /[:=]\s*["']?$/.test(lead) ? `${lead}${REDACTED}` : `${lead} ${REDACTED}`;
    });
  return out;
}

/**
 * `text` with every given secret and its URL-encoded and base64 forms replaced, and nothing else: for
 * text of our own making (a node's error), where a credential-shaped phrase ("token budget") is words.
 */
export function redactValues(text: string, secrets: Iterable<string | null | undefined>): string {
  let out = text;
  for (const secret of usable(secrets)) {
    for (const form of new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]))
      if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/** One line, at most `max` characters: a short cause, not a whole body. */
export function shorten(text: string, max = MAX_CAUSE_CHARS): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** An upstream's message as a caller or a log may see it: secrets removed, one short line. */
export function safeCause(text: string, secrets: Iterable<string | null | undefined> = []): string {
  // Shortened after redaction: a cut must not leave half a secret the search no longer finds.
  return shorten(redactSecrets(text, secrets));
}

/** The secret values among request headers (Authorization's credentials without their scheme too). */
export function headerSecrets(headers: Record<string, string | string[] | undefined>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADERS.has(name.toLowerCase()) || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      out.push(v);
      const space = v.indexOf(' ');
      if (space > 0) out.push(v.slice(space + 1).trim());
    }
  }
  return out;
}
