import { createPublicKey, createVerify, generateKeyPairSync, publicDecrypt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { md4, signRsaMd4 } from './md4.js';

describe('MD4 (RFC 1320)', () => {
  // The test suite of RFC 1320, appendix A.5.
  it.each([
    ['', '31d6cfe0d16ae931b73c59d7e0c089c0'],
    ['a', 'bde52cb31de33e46245e05fbdbd6fb24'],
    ['abc', 'a448017aaf21d8525fc10ae87aa6729d'],
    ['message digest', 'd9130a8164549fe818874806e1c7014b'],
    ['abcdefghijklmnopqrstuvwxyz', 'd79e1c308aa5bbcdeea8ed63df412da9'],
    ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '043f8582f241db351ce627e153e7f0e4'],
    [
      '12345678901234567890123456789012345678901234567890123456789012345678901234567890',
      'e33b4ddc9c38f2199c3e7b164fcc0536',
    ],
  ])('md4(%j) = %s', (text, hex) => {
    expect(md4(Buffer.from(text)).toString('hex')).toBe(hex);
  });

  it('pads across block edges (55, 56, 63, 64 and 65 bytes differ)', () => {
    const digests = [55, 56, 63, 64, 65].map((n) => md4(Buffer.alloc(n, 0x61)).toString('hex'));
    expect(new Set(digests).size).toBe(5);
    for (const d of digests) expect(d).toMatch(/^[0-9a-f]{32}$/);
  });

  it('signs RSASSA-PKCS1-v1_5 with MD4: the public key recovers DigestInfo and digest', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const signature = signRsaMd4('test', pem);
    const recovered = publicDecrypt(createPublicKey(privateKey), signature);
    expect(recovered.toString('hex')).toBe(
      `3020300c06082a864886f70d020405000410${md4(Buffer.from('test')).toString('hex')}`,
    );
    // A SHA-256 verifier refuses it: the digest is MD4's.
    expect(createVerify('SHA256').update('test').verify(createPublicKey(privateKey), signature)).toBe(false);
  });

  it('a key that is not a private key is an error, not a signature', () => {
    expect(() => signRsaMd4('test', 'not a key')).toThrow();
  });
});
