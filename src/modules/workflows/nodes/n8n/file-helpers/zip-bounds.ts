import { Unzip, UnzipInflate, UnzipPassThrough } from 'fflate';
import { NodeOperationError } from '../../../engine/node-type.js';
import { FILE_LIMITS } from './limits.js';

export interface ZipEntry {
  name: string;
  bytes: Uint8Array;
}

const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

/**
 * Unzips with a cap on what the entries decompress to, counted as the bytes come out (a zip's
 * declared sizes can lie): a zip bomb stops at the cap with a clear error instead of filling memory.
 * `only` keeps just the entries it accepts (the rest are skipped without inflating).
 */
export function unzipBounded(
  bytes: Uint8Array,
  what: string,
  only: (name: string) => boolean = () => true,
  maxBytes: number = FILE_LIMITS.unzippedBytes,
): ZipEntry[] {
  if (bytes[0] !== 0x50 || bytes[1] !== 0x4b)
    throw new NodeOperationError(`The ${what} is not a valid zip file`);
  const entries: ZipEntry[] = [];
  let total = 0;
  let count = 0;
  let failure: Error | null = null;
  const unzip = new Unzip((file) => {
    if (failure) return;
    count++;
    if (count > FILE_LIMITS.archiveEntries) {
      failure = new NodeOperationError(`The ${what} holds more than ${FILE_LIMITS.archiveEntries} files`);
      return;
    }
    if (file.name.endsWith('/') || !only(file.name)) return;
    const chunks: Uint8Array[] = [];
    file.ondata = (error, chunk, final) => {
      if (failure) return;
      if (error) {
        failure = new NodeOperationError(`The ${what} is damaged`, { description: error.message });
        return;
      }
      total += chunk.length;
      if (total > maxBytes) {
        failure = new NodeOperationError(`The ${what} decompresses to more than ${mb(maxBytes)}`, {
          description: 'A compressed file that expands this much is refused (a possible zip bomb).',
        });
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final) entries.push({ name: file.name, bytes: Buffer.concat(chunks) });
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  unzip.register(UnzipPassThrough);
  // Fed in slices so a bomb is stopped after its first megabytes, not after inflating all of it.
  const SLICE = 64 * 1024;
  try {
    for (let at = 0; at < bytes.length && !failure; at += SLICE) {
      const end = Math.min(at + SLICE, bytes.length);
      unzip.push(bytes.subarray(at, end), end === bytes.length);
    }
  } catch (error) {
    if (!failure)
      throw new NodeOperationError(`The ${what} is not a valid zip file`, { description: String(error) });
  }
  if (failure) throw failure;
  return entries;
}
