import { describe, expect, it } from 'vitest';
import { imageSize, imageTokens, MAX_IMAGE_TOKENS } from './image-tokens.js';

const b64 = (...parts: Array<Buffer | number[] | string>) =>
  Buffer.concat(
    parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p as number[]))),
  ).toString('base64');
const u16be = (n: number) => [n >> 8, n & 0xff];
const u16le = (n: number) => [n & 0xff, n >> 8];
const u24le = (n: number) => [n & 0xff, (n >> 8) & 0xff, n >> 16];

function png(width: number, height: number): string {
  const ihdr = Buffer.alloc(8);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  return b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], 'IHDR', ihdr, [8, 6, 0, 0, 0]);
}

/** SOI, an APP1 segment of `skip` bytes (an EXIF block before the frame), then SOF0. */
function jpeg(width: number, height: number, skip = 16): string {
  return b64(
    [0xff, 0xd8, 0xff, 0xe1, ...u16be(skip + 2)],
    Buffer.alloc(skip, 0x41),
    [0xff, 0xff], // a fill byte before the marker
    [0xc0, ...u16be(17), 8, ...u16be(height), ...u16be(width), 3], // SOF0: precision, height, width
    Buffer.alloc(9),
  );
}

describe('image tokens (Anthropic: width × height / 750, scaled to 1,568 px and ~1,600 tokens)', () => {
  it('reads the size of PNG, JPEG (past an EXIF segment and fill bytes), GIF and the three WebP kinds', () => {
    expect(imageSize(png(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSize(jpeg(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSize(jpeg(300, 200, 60_000))).toEqual({ width: 300, height: 200 });
    expect(imageSize(b64('GIF89a', u16le(320), u16le(240), Buffer.alloc(20)))).toEqual({
      width: 320,
      height: 240,
    });
    const riff = (kind: string, body: number[]) =>
      b64('RIFF', [0, 0, 0, 0], 'WEBP', kind, [0, 0, 0, 0], body, Buffer.alloc(10));
    expect(imageSize(riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, ...u16le(800), ...u16le(600)]))).toEqual({
      width: 800,
      height: 600,
    });
    const bits = (800 - 1) | ((600 - 1) << 14);
    expect(
      imageSize(riff('VP8L', [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >>> 24])),
    ).toEqual({
      width: 800,
      height: 600,
    });
    expect(imageSize(riff('VP8X', [0, 0, 0, 0, ...u24le(1999), ...u24le(999)]))).toEqual({
      width: 2000,
      height: 1000,
    });
  });

  it('counts width × height / 750, scales the long edge to 1,568 and caps at 1,600', () => {
    expect(imageTokens(png(750, 1))).toBe(1);
    expect(imageTokens(png(1000, 500))).toBe(667);
    // 1,568 × 39.2 after scaling.
    expect(imageTokens(png(4000, 100))).toBe(82);
    expect(imageTokens(png(3000, 3000))).toBe(MAX_IMAGE_TOKENS);
  });

  it('an image whose size cannot be read counts as the cap, never 0', () => {
    expect(imageTokens('A'.repeat(1_000_000))).toBe(MAX_IMAGE_TOKENS);
    expect(imageTokens('')).toBe(MAX_IMAGE_TOKENS);
    expect(imageTokens(png(0, 10))).toBe(MAX_IMAGE_TOKENS);
    // A JPEG cut before its frame header.
    expect(imageTokens(b64([0xff, 0xd8, 0xff, 0xe1, 0x10, 0x00]))).toBe(MAX_IMAGE_TOKENS);
  });
});
