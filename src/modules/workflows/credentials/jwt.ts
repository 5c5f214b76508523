import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/** n8n's jwtAuth credential data (fields checked when it was saved). */
export interface JwtCredential {
  keyType?: string;
  secret?: string;
  privateKey?: string;
  publicKey?: string;
  algorithm?: string;
}

const algorithmOf = (c: JwtCredential) => c.algorithm ?? 'HS256';

/** A PEM pasted on one line (n8n's credential form allows it): the base64 body back on lines. */
export function pem(text: string): string {
  const match = /^(-----BEGIN [A-Z ]+-----)\s*([\s\S]+?)\s*(-----END [A-Z ]+-----)\s*$/.exec(text.trim());
  if (!match) return text;
  const body = (match[2] ?? '').replace(/\s+/g, '');
  return `${match[1]}\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n${match[3]}\n`;
}

export function signingKey(c: JwtCredential): Uint8Array | KeyObject {
  if ((c.keyType ?? 'passphrase') === 'passphrase') return new TextEncoder().encode(c.secret ?? '');
  if (!c.privateKey) throw new Error('The credential has no private key to sign with');
  return createPrivateKey(pem(c.privateKey));
}

export function verifyingKey(c: JwtCredential): Uint8Array | KeyObject {
  if ((c.keyType ?? 'passphrase') === 'passphrase') return new TextEncoder().encode(c.secret ?? '');
  if (c.publicKey) return createPublicKey(pem(c.publicKey));
  if (c.privateKey) return createPublicKey(createPrivateKey(pem(c.privateKey)));
  throw new Error('The credential has no key to verify with');
}

/** Signs `payload` as n8n's Respond to Webhook does (jsonwebtoken: `typ: JWT`, an `iat` claim). */
export async function signJwt(c: JwtCredential, payload: Record<string, unknown>): Promise<string> {
  const alg = algorithmOf(c);
  const jwt = new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT' });
  if (payload.iat === undefined) jwt.setIssuedAt();
  return jwt.sign(signingKey(c));
}

/** The claims of a token the credential signed with its algorithm; throws when it did not (or it expired). */
export async function verifyJwt(c: JwtCredential, token: string): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(token, verifyingKey(c), { algorithms: [algorithmOf(c)] });
  return payload as Record<string, unknown>;
}
