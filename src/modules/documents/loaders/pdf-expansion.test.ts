import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodedSize } from './pdf-expansion.mjs';

const inflated = Buffer.alloc(100_000, 0x20);
const deflated = deflateSync(inflated);
const withStream = (dict: string, data: Buffer, prefix = ''): Buffer =>
  Buffer.concat([
    Buffer.from(`%PDF-1.4\n${prefix}5 0 obj\n${dict}\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream\nendobj\n', 'latin1'),
  ]);

describe('decodedSize', () => {
  it('counts what a Flate stream inflates to, as a name or in an array', () => {
    expect(decodedSize(withStream('<< /Filter /FlateDecode >>', deflated), 1e9)).toBe(100_000);
    expect(decodedSize(withStream('<< /Filter [ /FlateDecode ] >>', deflated), 1e9)).toBe(100_000);
  });

  it('returns null past the budget', () => {
    expect(decodedSize(withStream('<< /Filter /FlateDecode >>', deflated), 99_999)).toBeNull();
  });

  it('counts a truncated stream for what it yields, as PDF.js reads it', () => {
    const half = decodedSize(
      withStream('<< /Filter /FlateDecode >>', deflated.subarray(0, deflated.length - 4)),
      1e9,
    );
    expect(half).toBeGreaterThan(0);
  });

  it('skips images and unfiltered streams, which text extraction does not expand', () => {
    expect(decodedSize(withStream('<< /Subtype /Image /Filter /FlateDecode >>', deflated), 10)).toBe(0);
    expect(decodedSize(withStream('<< /Length 3 >>', Buffer.from('abc')), 10)).toBe(0);
  });

  it('counts chains it cannot inflate, and encrypted files, at the worst ratio', () => {
    const chained = decodedSize(withStream('<< /Filter [/ASCII85Decode /FlateDecode] >>', deflated), 1e9);
    expect(chained).toBeCloseTo(deflated.length * 1.25 * 1032);
    const encrypted = decodedSize(
      withStream('<< /Filter /FlateDecode >>', deflated, '% /Encrypt 9 0 R\n'),
      1e9,
    );
    expect(encrypted).toBe(deflated.length * 1032);
  });
});
