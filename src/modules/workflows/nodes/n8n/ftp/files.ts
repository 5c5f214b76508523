import path from 'node:path';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';

/** What the FTP node asks of either protocol. Every method is bounded by the session's deadline. */
export interface RemoteFiles {
  list(dir: string, recursive: boolean): Promise<Array<Record<string, Json>>>;
  download(file: string): Promise<Buffer>;
  upload(file: string, bytes: Buffer): Promise<void>;
  delete(target: string, folder: boolean, recursive: boolean): Promise<void>;
  rename(from: string, to: string, createDirectories: boolean): Promise<void>;
  close(): void;
}

export const FTP_LIMITS = {
  /** A downloaded file: refused past this (as other nodes' files). */
  fileBytes: 50 * 1024 * 1024,
  /** Entries one list returns (a recursive one, all levels together). */
  listEntries: 10_000,
  /** Folders a recursive list or delete goes down. */
  depth: 20,
  /** One node run's transfers together (and the connection), unless the execution ends sooner. */
  timeoutMs: 120_000,
  /** A path's length. */
  pathLength: 4_096,
};

/**
 * A remote path as the node passes it on: bounded, with no NUL or line break (an FTP command is one
 * line: a newline would start another command).
 */
export function remotePath(value: unknown, what: string): string {
  const p = String(value ?? '');
  if (p.trim() === '') throw new NodeOperationError(`The parameter '${what}' is empty`);
  if (p.length > FTP_LIMITS.pathLength)
    throw new NodeOperationError(
      `The parameter '${what}' is longer than ${FTP_LIMITS.pathLength} characters`,
    );
  if (/[\0\r\n]/.test(p)) throw new NodeOperationError(`The parameter '${what}' holds a control character`);
  return p;
}

export const joinRemote = (dir: string, name: string) => path.posix.join(dir, name);

export function tooLarge(file: string): NodeOperationError {
  return new NodeOperationError(`'${file}' is larger than ${FTP_LIMITS.fileBytes} bytes: not downloaded`);
}

export function tooMany(): NodeOperationError {
  return new NodeOperationError(`The listing has more than ${FTP_LIMITS.listEntries} entries`);
}

/** Collects chunks up to the file bound; `fail` is called once it is passed. */
export function boundedSink(file: string, fail: (err: Error) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  return {
    push(chunk: Buffer) {
      if (over) return;
      size += chunk.length;
      if (size > FTP_LIMITS.fileBytes) {
        over = true;
        fail(tooLarge(file));
      } else chunks.push(chunk);
    },
    get over() {
      return over;
    },
    bytes: () => Buffer.concat(chunks),
  };
}
