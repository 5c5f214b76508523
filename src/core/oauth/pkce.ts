import { createHash, randomBytes } from 'node:crypto';

/** Base64url SHA-256, used for PKCE challenges and for the hashes of one-time secrets at rest. */
export function sha256Base64url(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

/** A fresh random secret: 32 bytes, 43 base64url characters (a valid RFC 7636 code_verifier). */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export const codeChallengeS256 = sha256Base64url;
