import {
  type BinaryToTextEncoding,
  createHash,
  createHmac,
  createSign,
  getHashes,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import { Type } from 'typebox';
import { binaryBytes } from '../../../engine/binary.js';
import { shownWhen, shownWhenAny } from '../../../engine/display-options.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { setField } from '../merge/json.js';
import { RSA_MD4_NAMES, signRsaMd4 } from './md4.js';

/** The hash types of n8n's Type list (hash and hmac). */
export const HASH_TYPES = [
  'MD5',
  'SHA1',
  'SHA256',
  'SHA3-256',
  'SHA3-384',
  'SHA3-512',
  'SHA384',
  'SHA512',
] as const;

/**
 * What OpenSSL 3 no longer signs with: n8n's list leaves it out; RSA-MD4 (md4.ts) is the exception, for
 * the workflows that chose it on older Node.
 */
const UNSUPPORTED = new Set(['RSA-MDC2', 'md4', 'mdc2', 'mdc2WithRSA']);

/** A generated random string: n8n has no bound; here a length past this is a node error. */
export const MAX_GENERATED_LENGTH = 65_536;

/** The parameters both versions share (v1 adds `secret` and `privateKey`; v2 reads them from a credential). */
export function cryptoParameters(version: 1 | 2) {
  return {
    action: Type.Enum(['generate', 'hash', 'hmac', 'sign'] as const, { default: 'hash' }),
    type: Type.Enum(HASH_TYPES, {
      default: version === 1 ? 'MD5' : 'SHA256',
      ...shownWhen({ action: ['hash', 'hmac'] }),
    }),
    binaryData: Type.Boolean({ default: false, ...shownWhen({ action: ['hash', 'hmac'] }) }),
    binaryPropertyName: Type.String({
      default: 'data',
      ...shownWhen({ action: ['hash', 'hmac'], binaryData: [true] }),
    }),
    value: Type.String({
      default: '',
      ...shownWhenAny(
        { show: { action: ['hash', 'hmac'], binaryData: [false] } },
        { show: { action: ['sign'] } },
      ),
    }),
    dataPropertyName: Type.String({ default: 'data', minLength: 1 }),
    encoding: Type.Enum(['base64', 'hex'] as const, {
      default: 'hex',
      ...shownWhen({ action: ['hash', 'hmac', 'sign'] }),
    }),
    algorithm: Type.String({ default: '', ...shownWhen({ action: ['sign'] }) }),
    encodingType: Type.Enum(['ascii', 'base64', 'hex', 'uuid'] as const, {
      default: 'uuid',
      ...shownWhen({ action: ['generate'] }),
    }),
    stringLength: Type.Integer({
      minimum: 0,
      default: 32,
      ...shownWhen({ action: ['generate'], encodingType: ['ascii', 'base64', 'hex'] }),
    }),
  };
}

export interface CryptoParams {
  action: 'generate' | 'hash' | 'hmac' | 'sign';
  type: (typeof HASH_TYPES)[number];
  binaryData: boolean;
  binaryPropertyName: string;
  value: string;
  dataPropertyName: string;
  encoding: 'base64' | 'hex';
  algorithm: string;
  encodingType: 'ascii' | 'base64' | 'hex' | 'uuid';
  stringLength: number;
}

function generate(p: CryptoParams): string {
  if (p.encodingType === 'uuid') return randomUUID();
  if (p.stringLength > MAX_GENERATED_LENGTH)
    throw new NodeOperationError(
      `Length ${p.stringLength} is too long: at most ${MAX_GENERATED_LENGTH} characters`,
    );
  const text = randomBytes(p.stringLength).toString(p.encodingType);
  // n8n drops base64's non-word characters (+ / =) before cutting to length.
  return (p.encodingType === 'base64' ? text.replace(/\W/g, '') : text).slice(0, p.stringLength);
}

function sign(p: CryptoParams, privateKey: string): string {
  const md4 = RSA_MD4_NAMES.has(p.algorithm);
  if ((!md4 && !getHashes().includes(p.algorithm)) || UNSUPPORTED.has(p.algorithm))
    throw new NodeOperationError(`The sign algorithm '${p.algorithm}' is not supported`);
  try {
    if (md4) return signRsaMd4(p.value, privateKey).toString(p.encoding);
    const signer = createSign(p.algorithm);
    signer.update(p.value);
    return signer.sign(privateKey, p.encoding as BinaryToTextEncoding);
  } catch (err) {
    throw new NodeOperationError(`Could not sign with the private key: ${(err as Error).message}`);
  }
}

/**
 * One item through n8n's Crypto node: the result under `dataPropertyName` (a dotted name is a path) of a
 * copy of the item; the binary stays unless it was what got hashed.
 */
export function cryptoItem(
  item: Item,
  itemIndex: number,
  p: CryptoParams,
  secrets: { hmacSecret: string; privateKey: string },
): Item {
  let value: string;
  let binaryUsed = false;
  if (p.action === 'generate') value = generate(p);
  else if (p.action === 'sign') value = sign(p, secrets.privateKey);
  else {
    const digest = p.action === 'hash' ? createHash(p.type) : createHmac(p.type, secrets.hmacSecret);
    if (p.binaryData) {
      try {
        digest.update(binaryBytes(item, p.binaryPropertyName, itemIndex).bytes);
      } catch (err) {
        throw new NodeOperationError((err as Error).message);
      }
      binaryUsed = true;
    } else digest.update(p.value);
    value = digest.digest(p.encoding);
  }
  const json = p.dataPropertyName.includes('.') ? structuredClone(item.json) : { ...item.json };
  setField(json, p.dataPropertyName, value as Json);
  const out: Item = { json };
  if (item.binary && !binaryUsed) out.binary = item.binary;
  return out;
}
