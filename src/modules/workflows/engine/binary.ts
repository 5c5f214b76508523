import path from 'node:path';
import type { BinaryData, Item } from './types.js';

/**
 * n8n's binary data in its "default" (in-memory) mode: the bytes as base64 on the item, beside
 * n8n's metadata. Bounded by what brought them in (a webhook's body limit, an HTTP response limit).
 */
export function binaryOf(bytes: Buffer, mimeType: string, fileName?: string): BinaryData {
  const type = (mimeType.split(';')[0] ?? '').trim().toLowerCase() || 'application/octet-stream';
  const extension = (fileName ? path.extname(fileName).slice(1).toLowerCase() : '') || EXTENSIONS[type];
  const fileType = fileTypeOf(type);
  return {
    data: bytes.toString('base64'),
    mimeType,
    ...(fileName ? { fileName } : {}),
    ...(extension ? { fileExtension: extension } : {}),
    ...(fileType ? { fileType } : {}),
    fileSize: prettySize(bytes.length),
  };
}

/** The bytes of a binary property; an error naming what is missing, as n8n's `assertBinaryData`. */
export function binaryBytes(
  item: Item | undefined,
  property: string,
  itemIndex = 0,
): { bytes: Buffer; meta: BinaryData } {
  const meta = item?.binary?.[property];
  if (!meta)
    throw new Error(
      item?.binary && Object.keys(item.binary).length > 0
        ? `This operation expects the node's input data to contain a binary file '${property}', but none was found [item ${itemIndex}]`
        : `This operation expects the node's input data to contain a binary file '${property}', but the item has no binary data [item ${itemIndex}]`,
    );
  return { bytes: Buffer.from(meta.data, 'base64'), meta };
}

/** What `$binary` shows in expressions: every property's metadata, without the bytes. */
export function binaryMetadata(binary: Item['binary']): Record<string, Omit<BinaryData, 'data'>> | undefined {
  if (!binary) return undefined;
  const out: Record<string, Omit<BinaryData, 'data'>> = {};
  for (const [key, { data: _bytes, ...meta }] of Object.entries(binary)) out[key] = meta;
  return out;
}

/**
 * `attachment; filename="report.pdf"` → `report.pdf` (a request's or a response's content disposition;
 * `filename*` first); path separators never survive.
 */
export function fileNameFromDisposition(disposition: string | undefined): string | undefined {
  if (!disposition) return undefined;
  let name: string | undefined;
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition)?.[1];
  if (star) {
    try {
      name = decodeURIComponent(star.trim());
    } catch {
      // a bad escape: the plain name, if any
    }
  }
  if (name === undefined) {
    const plain = /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/i.exec(disposition);
    name = (plain?.[1] ?? plain?.[2])?.trim();
  }
  return name ? name.replace(/[/\\]/g, '_').slice(0, 255) : undefined;
}

/** n8n's coarse file types. */
function fileTypeOf(mimeType: string): BinaryData['fileType'] | undefined {
  if (mimeType.startsWith('image/')) return 'image';
  if (mimeType.startsWith('video/')) return 'video';
  if (mimeType.startsWith('audio/')) return 'audio';
  if (mimeType.startsWith('text/')) return 'text';
  if (mimeType === 'application/json') return 'json';
  if (mimeType === 'application/pdf') return 'pdf';
  return undefined;
}

const EXTENSIONS: Record<string, string> = {
  'application/json': 'json',
  'application/pdf': 'pdf',
  'application/xml': 'xml',
  'application/zip': 'zip',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/html': 'html',
};

const BY_EXTENSION: Record<string, string> = {
  ...Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type])),
  jpeg: 'image/jpeg',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
  oga: 'audio/ogg',
  ogg: 'audio/ogg',
};

/** A file name's MIME type by its extension (mime-types' `lookup` for the common ones), else octet-stream. */
export function mimeTypeOfName(fileName: string): string {
  return BY_EXTENSION[path.extname(fileName).slice(1).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * `3.07 kB`, as n8n shows sizes: its pretty-bytes call, decimal units and three significant digits
 * (so `999999` is `1000 kB`, as there).
 */
export function prettySize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  const exponent = Math.min(Math.floor(Math.log10(bytes) / 3), units.length);
  return `${Number((bytes / 1000 ** exponent).toPrecision(3))} ${units[exponent - 1]}`;
}
