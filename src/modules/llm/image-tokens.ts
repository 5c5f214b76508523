/**
 * An image's tokens as Anthropic counts them: width × height / 750, after the image is scaled down
 * (aspect kept) to at most 1,568 pixels on its long edge and about 1,600 tokens. The dimensions are
 * read from the header of the base64 data (PNG, JPEG, GIF, WebP), decoding only the bytes needed; an
 * image whose size cannot be read counts as the cap, so an estimate errs high rather than at 0.
 */

/** Anthropic's cap for an image after resizing (its documented ~1,600 tokens). */
export const MAX_IMAGE_TOKENS = 1600;
const MAX_EDGE = 1568;
const PIXELS_PER_TOKEN = 750;
/** JPEG segments walked before giving up (real files reach their frame header within a few). */
const MAX_JPEG_SEGMENTS = 256;

export function imageTokens(base64: string): number {
  const size = imageSize(base64);
  if (!size) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_EDGE / Math.max(size.width, size.height));
  const tokens = Math.ceil((size.width * scale * (size.height * scale)) / PIXELS_PER_TOKEN);
  return Math.max(1, Math.min(MAX_IMAGE_TOKENS, tokens));
}

interface Size {
  width: number;
  height: number;
}

/** `length` bytes of the data from byte `start`, decoding only the base64 characters that hold them. */
function bytesAt(base64: string, start: number, length: number): Buffer {
  const from = Math.floor(start / 3) * 4;
  const chars = Math.ceil(((start % 3) + length) / 3) * 4;
  const skip = start % 3;
  return Buffer.from(base64.slice(from, from + chars), 'base64').subarray(skip, skip + length);
}

/** The pixel size an image's header declares, or null (not one of the four formats, or cut short). */
export function imageSize(base64: string): Size | null {
  const head = bytesAt(base64, 0, 30);
  if (head.length < 10) return null;
  const size = headerSize(head) ?? (head[0] === 0xff && head[1] === 0xd8 ? jpegSize(base64) : null);
  return size && size.width > 0 && size.height > 0 ? size : null;
}

function headerSize(b: Buffer): Size | null {
  // PNG: the signature, then IHDR's width and height (big-endian).
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR')
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  const ascii = b.toString('latin1', 0, 6);
  if (ascii === 'GIF87a' || ascii === 'GIF89a')
    return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP')
    return null;
  switch (b.toString('latin1', 12, 16)) {
    case 'VP8 ': // lossy: after the frame tag and its start code, 14-bit sizes
      return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    case 'VP8L': {
      // lossless: after the 0x2f signature, width − 1 and height − 1 in 14 bits each
      const bits = b.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    case 'VP8X': // extended: the canvas's width − 1 and height − 1, 24 bits each
      return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
    default:
      return null;
  }
}

/** A JPEG's size from its frame header (SOFn), walking the segments before it by their lengths. */
function jpegSize(base64: string): Size | null {
  let at = 2;
  for (let n = 0; n < MAX_JPEG_SEGMENTS; n++) {
    const head = bytesAt(base64, at, 9);
    if (head.length < 4 || head[0] !== 0xff) return null;
    const marker = head[1] as number;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    // Start of frame (not DHT C4, JPG C8, DAC CC): precision, then height and width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return head.length < 9 ? null : { width: head.readUInt16BE(7), height: head.readUInt16BE(5) };
    if (marker === 0xda || marker === 0xd9) return null; // scan data or the end before any frame
    at += 2 + head.readUInt16BE(2);
  }
  return null;
}
