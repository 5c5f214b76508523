// Bounds how far a PDF's streams expand before PDF.js decodes them. A worker's resourceLimits cap the JS
// heap but not ArrayBuffers, and PDF.js decodes a stream into one: a 600 KB deflate bomb costs ~2 GB of
// process memory. So the worker first inflates every stream PDF.js may decode (not images: text
// extraction never decodes them) with a running total, and refuses the file past the budget.
import { constants, inflateSync } from 'node:zlib';

/** Most bytes one encoded byte can become, per filter (Flate's deflate maximum, LZW's 12-bit codes). */
const WORST_RATIO = {
  FlateDecode: 1032,
  Fl: 1032,
  LZWDecode: 2730,
  LZW: 2730,
  RunLengthDecode: 128,
  RL: 128,
  ASCII85Decode: 1.25,
  A85: 1.25,
  ASCIIHexDecode: 1,
  AHx: 1,
};

const STREAM_START = />>\s*stream(?:\r\n|\n|\r)/g;
const FILTER = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/;
const IMAGE = /\/Subtype\s*\/Image\b/;

/**
 * The bytes the PDF's non-image streams decode to, or `null` once that passes `budget`. Flate-only streams
 * are inflated (output discarded); other filter chains, and every stream of an encrypted file (its data
 * is ciphertext until PDF.js decrypts it), count at their worst-case ratio.
 * @param {Uint8Array} bytes
 * @param {number} budget
 * @returns {number | null}
 */
export function decodedSize(bytes, budget) {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const encrypted = /\/Encrypt\b/.test(text);
  let total = 0;
  STREAM_START.lastIndex = 0;
  for (let m = STREAM_START.exec(text); m !== null; m = STREAM_START.exec(text)) {
    const dataStart = m.index + m[0].length;
    const objAt = text.lastIndexOf('obj', m.index);
    const dict = text.slice(Math.max(objAt, m.index - 8192), m.index);
    let dataEnd = text.indexOf('endstream', dataStart);
    if (dataEnd === -1) dataEnd = text.length;
    STREAM_START.lastIndex = dataEnd;
    // The end-of-line before `endstream` is not data.
    if (text[dataEnd - 1] === '\n') dataEnd--;
    if (text[dataEnd - 1] === '\r') dataEnd--;
    if (IMAGE.test(dict)) continue;
    const filters = (FILTER.exec(dict)?.[1] ?? '').match(/[A-Za-z0-9]+/g) ?? [];
    if (filters.length === 0) continue; // unfiltered data is as large as it is
    const data = bytes.subarray(dataStart, dataEnd);
    const flateOnly = filters.length === 1 && (filters[0] === 'FlateDecode' || filters[0] === 'Fl');
    if (flateOnly && !encrypted) {
      total += inflatedSize(data, budget - total);
    } else {
      const ratio = filters.reduce((r, f) => r * (WORST_RATIO[f] ?? 1), 1);
      total += data.byteLength * ratio;
    }
    if (total > budget) return null;
  }
  return total;
}

/** Inflated length, or more than `room` when it would not fit; broken data counts for what it yields. */
function inflatedSize(data, room) {
  try {
    // SYNC_FLUSH: a truncated stream yields what it holds, as PDF.js reads it.
    return inflateSync(data, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: Math.max(1, room + 1) })
      .byteLength;
  } catch (err) {
    if (err?.code === 'ERR_BUFFER_TOO_LARGE') return room + 1;
    return 0; // not zlib data: PDF.js cannot decode it either
  }
}
