import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * Text ⇄ bytes in the encodings n8n's file nodes offer (iconv-lite names: `utf8`, `latin1`,
 * `windows1252`, …). Node's TextDecoder knows the WHATWG encodings; encoding beyond UTF-8/UTF-16LE/
 * Latin-1/ASCII/base64 is done through a byte table built from the decoder, for single-byte charsets.
 */
const NODE_BUFFER = new Set([
  'utf8',
  'utf-8',
  'utf16le',
  'ucs2',
  'latin1',
  'binary',
  'ascii',
  'base64',
  'hex',
]);

function whatwgLabel(encoding: string): string {
  const e = encoding.toLowerCase();
  const win = /^(?:windows|win|cp)-?(\d{3,4})$/.exec(e);
  if (win) return `windows-${win[1]}`;
  const iso = /^iso-?8859-?(\d{1,2})$/.exec(e);
  if (iso) return `iso-8859-${iso[1]}`;
  return e;
}

export function decodeText(bytes: Buffer, encoding = 'utf8', stripBom = true): string {
  const e = encoding.toLowerCase();
  let text: string;
  if (NODE_BUFFER.has(e)) text = bytes.toString(e === 'utf-8' ? 'utf8' : (e as BufferEncoding));
  else {
    try {
      text = new TextDecoder(whatwgLabel(e)).decode(bytes);
    } catch {
      throw new NodeOperationError(`The encoding '${encoding}' is not supported`);
    }
  }
  return stripBom && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

const tables = new Map<string, Map<number, number>>();

/** A single-byte charset's code point → byte table, read off the decoder. */
function tableOf(label: string): Map<number, number> {
  let table = tables.get(label);
  if (!table) {
    const decoder = new TextDecoder(label);
    table = new Map();
    for (let b = 0; b < 256; b++) {
      const ch = decoder.decode(Uint8Array.of(b));
      if (ch.length === 1 && ch !== '\ufffd') table.set(ch.charCodeAt(0), b);
    }
    tables.set(label, table);
  }
  return table;
}

export function encodeText(text: string, encoding = 'utf8', addBom = false): Buffer {
  const e = encoding.toLowerCase();
  let bytes: Buffer;
  if (NODE_BUFFER.has(e)) bytes = Buffer.from(text, e === 'utf-8' ? 'utf8' : (e as BufferEncoding));
  else {
    let table: Map<number, number>;
    try {
      table = tableOf(whatwgLabel(e));
    } catch {
      throw new NodeOperationError(`The encoding '${encoding}' is not supported`);
    }
    // iconv-lite writes `?` for a character the charset lacks.
    bytes = Buffer.from([...text].map((ch) => table.get(ch.charCodeAt(0)) ?? 0x3f));
  }
  return addBom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]) : bytes;
}
