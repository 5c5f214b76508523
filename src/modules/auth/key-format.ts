import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyType } from '../../core/auth/principal.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32; // ~190 bits of entropy
const CHECKSUM_LENGTH = 6;

export const KEY_PREFIX: Record<KeyType, string> = { development: 'DEV_API_', production: 'PROD_API_' };
const KEY_PATTERN = /^(DEV_API_|PROD_API_)([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting higher bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(prefix: string, body: string): string {
  const digest = createHash('sha256').update(prefix).update(body).digest();
  let n = digest.readUInt32BE(0) * 0x100 + (digest[4] ?? 0);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out += ALPHABET[n % 62];
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateKey(type: KeyType): string {
  const prefix = KEY_PREFIX[type];
  const body = randomBase62(BODY_LENGTH);
  return `${prefix}${body}${checksum(prefix, body)}`;
}

type ParsedKey = { ok: true; type: KeyType } | { ok: false; reason: 'malformed' | 'checksum' };

/** Checks shape and checksum without any database look-up. */
export function parseKey(value: string): ParsedKey {
  const match = KEY_PATTERN.exec(value);
  if (!match) return { ok: false, reason: 'malformed' };
  const [, prefix = '', body = '', sum = ''] = match;
  const expected = checksum(prefix, body);
  if (!timingSafeEqual(Buffer.from(sum), Buffer.from(expected))) return { ok: false, reason: 'checksum' };
  return { ok: true, type: prefix === KEY_PREFIX.production ? 'production' : 'development' };
}

export function looksLikeKey(value: string): boolean {
  return value.startsWith(KEY_PREFIX.development) || value.startsWith(KEY_PREFIX.production);
}

/** Keys are high-entropy, so a plain SHA-256 is a safe, fast look-up hash. */
export function hashKey(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
