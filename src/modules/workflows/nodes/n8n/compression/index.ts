import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { unzipBounded } from '../file-helpers/zip-bounds.js';

const CompressionParameters = Type.Object(
  {
    operation: Type.Union([Type.Literal('compress'), Type.Literal('decompress')], { default: 'decompress' }),
    binaryPropertyName: Type.String({ default: 'data' }),
    outputFormat: Type.Union([Type.Literal('gzip'), Type.Literal('zip')], { default: 'zip' }),
    fileName: Type.String({ default: '' }),
    binaryPropertyOutput: Type.String({ default: 'data' }),
    outputPrefix: Type.String({ default: 'file_' }),
  },
  { additionalProperties: false },
);

const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

const MIME_BY_EXT: Record<string, string> = {
  json: 'application/json',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  xml: 'application/xml',
  zip: 'application/zip',
};
const mimeOf = (name: string) =>
  MIME_BY_EXT[path.extname(name).slice(1).toLowerCase()] ?? 'application/octet-stream';

/** gunzip with a cap on the output (zlib stops at `maxOutputLength`): a gzip bomb is a clear error. */
function gunzipBounded(bytes: Buffer): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: FILE_LIMITS.unzippedBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError)
      throw new NodeOperationError(
        `The gzip file decompresses to more than ${mb(FILE_LIMITS.unzippedBytes)}`,
        {
          description: 'A compressed file that expands this much is refused (a possible zip bomb).',
        },
      );
    throw new NodeOperationError('The gzip file is damaged', { description: (error as Error).message });
  }
}

// By the bytes first (a zip starts `PK`, a gzip 1f 8b), then by what the file says it is.
const isGzip = (b: Buffer, meta: BinaryData) =>
  (b[0] === 0x1f && b[1] === 0x8b) || meta.fileExtension === 'gz' || meta.mimeType.includes('gzip');
const isZip = (b: Buffer, meta: BinaryData) =>
  (b[0] === 0x50 && b[1] === 0x4b) || meta.fileExtension === 'zip' || /\/(x-)?zip/.test(meta.mimeType);

/**
 * n8n's Compression (v1, 1.1): the listed binary properties zipped into one archive or gzipped one
 * by one, or zip/gzip files unpacked into `file_0`, `file_1`, …. Decompression is bounded in total
 * output and entries, so a zip bomb fails the node with a clear message.
 */
export const n8nCompressionNode = defineNode({
  type: 'n8n-nodes-base.compression',
  versions: [1, 1.1],
  schema: CompressionParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const names = p.binaryPropertyName
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      const binary: Record<string, BinaryData> = {};
      if (p.operation === 'decompress') {
        let n = 0;
        let total = 0;
        for (const name of names) {
          const { bytes, meta } = binaryBytes(item, name, i);
          if (isGzip(bytes, meta) && !(bytes[0] === 0x50 && bytes[1] === 0x4b)) {
            const data = gunzipBounded(bytes);
            total += data.length;
            if (total > FILE_LIMITS.unzippedBytes)
              throw new NodeOperationError(
                `The archives decompress to more than ${mb(FILE_LIMITS.unzippedBytes)}`,
              );
            const fileName = (meta.fileName ?? 'file.gz').replace(/\.gz$/i, '');
            binary[`${p.outputPrefix}${n++}`] = binaryOf(data, mimeOf(fileName), fileName);
          } else if (isZip(bytes, meta)) {
            for (const entry of unzipBounded(bytes, 'zip file')) {
              total += entry.bytes.length;
              if (total > FILE_LIMITS.unzippedBytes)
                throw new NodeOperationError(
                  `The archives decompress to more than ${mb(FILE_LIMITS.unzippedBytes)}`,
                );
              const fileName = path.posix.basename(entry.name);
              binary[`${p.outputPrefix}${n++}`] = binaryOf(
                Buffer.from(entry.bytes),
                mimeOf(fileName),
                fileName,
              );
            }
          } else
            throw new NodeOperationError(`The binary property '${name}' is neither a zip nor a gzip file`);
        }
      } else if (p.outputFormat === 'zip') {
        const files: Record<string, Uint8Array> = {};
        for (const name of names) {
          const { bytes, meta } = binaryBytes(item, name, i);
          files[meta.fileName || `${name}${meta.fileExtension ? `.${meta.fileExtension}` : ''}`] = bytes;
        }
        const zipped = Buffer.from(zipSync(files));
        assertSize('zip file to write', zipped.length, FILE_LIMITS.outputBytes);
        binary[p.binaryPropertyOutput] = binaryOf(zipped, 'application/zip', p.fileName || 'data.zip');
      } else {
        names.forEach((name, n) => {
          const { bytes, meta } = binaryBytes(item, name, i);
          const fileName = `${meta.fileName || name}.gz`;
          binary[`${p.outputPrefix}${n}`] = binaryOf(gzipSync(bytes), 'application/gzip', fileName);
        });
      }
      out.push({ json: item.json, binary, pairedItem: { item: i } });
    }
    return output(out);
  },
});
