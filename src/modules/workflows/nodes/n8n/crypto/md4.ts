import { constants, privateEncrypt } from 'node:crypto';

/**
 * MD4 (RFC 1320), which OpenSSL 3 (Node 17+) no longer provides, for n8n's `RSA-MD4` signatures: n8n
 * lists the algorithm from older Node's hash list and its own test workflow pins such a signature.
 * Only for that; MD4 is broken and nothing new should choose it.
 */
export function md4(data: Uint8Array): Buffer {
  const bitLength = data.length * 8;
  // Pad: 0x80, zeros to 56 mod 64, then the bit length as a 64-bit little-endian number.
  const padded = Buffer.alloc((((data.length + 8) >> 6) + 1) * 64);
  padded.set(data);
  padded[data.length] = 0x80;
  padded.writeUInt32LE(bitLength >>> 0, padded.length - 8);
  padded.writeUInt32LE(Math.floor(bitLength / 2 ** 32) >>> 0, padded.length - 4);

  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const x = new Uint32Array(16);
  const rotl = (v: number, s: number) => (v << s) | (v >>> (32 - s));
  const f = (p: number, q: number, r: number) => (p & q) | (~p & r);
  const g = (p: number, q: number, r: number) => (p & q) | (p & r) | (q & r);
  const h = (p: number, q: number, r: number) => p ^ q ^ r;
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) x[i] = padded.readUInt32LE(block + 4 * i);
    const [aa, bb, cc, dd] = [a, b, c, d];
    // Round 1: [abcd k s] with s = 3, 7, 11, 19.
    for (const k of [0, 4, 8, 12]) {
      a = rotl((a + f(b, c, d) + (x[k] as number)) | 0, 3);
      d = rotl((d + f(a, b, c) + (x[k + 1] as number)) | 0, 7);
      c = rotl((c + f(d, a, b) + (x[k + 2] as number)) | 0, 11);
      b = rotl((b + f(c, d, a) + (x[k + 3] as number)) | 0, 19);
    }
    // Round 2: column order, + 0x5A827999, s = 3, 5, 9, 13.
    for (const k of [0, 1, 2, 3]) {
      a = rotl((a + g(b, c, d) + (x[k] as number) + 0x5a827999) | 0, 3);
      d = rotl((d + g(a, b, c) + (x[k + 4] as number) + 0x5a827999) | 0, 5);
      c = rotl((c + g(d, a, b) + (x[k + 8] as number) + 0x5a827999) | 0, 9);
      b = rotl((b + g(c, d, a) + (x[k + 12] as number) + 0x5a827999) | 0, 13);
    }
    // Round 3: bit-reversed order, + 0x6ED9EBA1, s = 3, 9, 11, 15.
    for (const k of [0, 2, 1, 3]) {
      a = rotl((a + h(b, c, d) + (x[k] as number) + 0x6ed9eba1) | 0, 3);
      d = rotl((d + h(a, b, c) + (x[k + 8] as number) + 0x6ed9eba1) | 0, 9);
      c = rotl((c + h(d, a, b) + (x[k + 4] as number) + 0x6ed9eba1) | 0, 11);
      b = rotl((b + h(c, d, a) + (x[k + 12] as number) + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = Buffer.alloc(16);
  for (const [i, v] of [a, b, c, d].entries()) out.writeUInt32LE(v >>> 0, 4 * i);
  return out;
}

/** DER of PKCS #1's DigestInfo prefix for MD4 (OID 1.2.840.113549.2.4), before the 16-byte digest. */
const MD4_DIGEST_INFO = Buffer.from('3020300c06082a864886f70d020405000410', 'hex');

/** The names Node (before OpenSSL 3) signed MD4 with RSA under. */
export const RSA_MD4_NAMES = new Set(['RSA-MD4', 'md4WithRSAEncryption']);

/** An RSASSA-PKCS1-v1_5 signature with MD4, as `createSign('RSA-MD4')` made it: the same bytes. */
export function signRsaMd4(value: string, privateKey: string): Buffer {
  const digestInfo = Buffer.concat([MD4_DIGEST_INFO, md4(Buffer.from(value, 'utf8'))]);
  return privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, digestInfo);
}
