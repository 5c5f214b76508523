import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { FileInfo, FTPContext, FTPResponse } from 'basic-ftp';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { boundedSink, FTP_LIMITS, joinRemote, type RemoteFiles, tooMany } from './files.js';

/** basic-ftp's FileType values (File 1, Directory 2, SymbolicLink 3): the library loads on first use. */
const TYPES: Record<number, string> = { 1: '-', 2: 'd', 3: 'l' };

function entry(info: FileInfo, full: string): Record<string, Json> {
  return {
    type: TYPES[info.type] ?? '-',
    name: info.name,
    size: info.size,
    modifyTime: info.modifiedAt ? info.modifiedAt.toISOString() : info.rawModifiedAt,
    ...(info.permissions
      ? {
          rights: {
            user: String(info.permissions.user),
            group: String(info.permissions.group),
            other: String(info.permissions.world),
          },
        }
      : {}),
    owner: info.user ?? '',
    group: info.group ?? '',
    target: info.link ?? '',
    path: full,
  };
}

/** basic-ftp's passive-mode parts (its own strategies connect before anyone may check the port). */
interface PassiveParts {
  parseEpsvResponse(message: string): number;
  parsePasvResponse(message: string): { host: string; port: number };
  connectForPassiveTransfer(host: string, port: number, ftp: FTPContext): Promise<void>;
}

/**
 * basic-ftp's passive-mode strategy (EPSV, else PASV on the control connection's address), with the
 * data port put to the outbound guard before connecting: an operator who allowed a private server by
 * `host:port` allowed that port, not whichever one the server names for its data connections.
 */
function guardedPassiveMode(
  parts: PassiveParts,
  address: string,
  dataPortAllowed: (port: number) => Promise<void>,
) {
  const refused = new WeakSet<object>();
  const open = async (ftp: FTPContext, command: 'EPSV' | 'PASV'): Promise<FTPResponse> => {
    const res = await ftp.request(command);
    const port =
      command === 'EPSV' ? parts.parseEpsvResponse(res.message) : parts.parsePasvResponse(res.message).port;
    try {
      await dataPortAllowed(port);
    } catch (error) {
      if (error !== null && typeof error === 'object') refused.add(error);
      throw error;
    }
    await parts.connectForPassiveTransfer(address, port, ftp);
    return res;
  };
  // EPSV first, PASV when EPSV fails in any way but the guard's refusal (as basic-ftp tries them).
  return async (ftp: FTPContext): Promise<FTPResponse> => {
    try {
      return await open(ftp, 'EPSV');
    } catch (error) {
      if (error !== null && typeof error === 'object' && refused.has(error)) throw error;
      return open(ftp, 'PASV');
    }
  };
}

/**
 * FTP through basic-ftp, connected to the address the outbound guard answered; data connections go
 * to that same address whatever PASV names (no transfer to a host the guard did not see), on a port
 * the guard allows (`dataPortAllowed` throws otherwise).
 */
export async function openFtp(
  address: string,
  login: { port: number; user: string; password: string },
  timeoutMs: number,
  dataPortAllowed: (port: number) => Promise<void>,
): Promise<RemoteFiles> {
  const { Client } = await import('basic-ftp');
  // Not in the package's index; basic-ftp has no exports map, and 5.x keeps these three as they are.
  const parts = (await import('basic-ftp/dist/transfer.js')) as unknown as PassiveParts;
  const client = new Client(Math.min(timeoutMs, 30_000), {
    allowSeparateTransferHost: false,
    maxListingBytes: 20 * 1024 * 1024,
  });
  client.prepareTransfer = guardedPassiveMode(parts, address, dataPortAllowed);
  try {
    await client.access({ host: address, port: login.port, user: login.user, password: login.password });
  } catch (err) {
    client.close();
    throw new NodeOperationError(`FTP connection to port ${login.port} failed: ${(err as Error).message}`);
  }
  const home = await client.pwd();
  const atHome = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } finally {
      if (!client.closed) await client.cd(home).catch(() => undefined);
    }
  };

  return {
    async list(dir, recursive) {
      const out: Array<Record<string, Json>> = [];
      const walk = async (at: string, depth: number) => {
        for (const info of await client.list(at)) {
          if (info.name === '.' || info.name === '..') continue;
          if (out.length >= FTP_LIMITS.listEntries) throw tooMany();
          const full = joinRemote(at, info.name);
          out.push(entry(info, full));
          if (recursive && info.isDirectory && depth < FTP_LIMITS.depth) await walk(full, depth + 1);
        }
      };
      await walk(dir, 0);
      return out;
    },
    async download(file) {
      let failure: Error | null = null;
      const sink = boundedSink(file, (err) => {
        failure = err;
        client.close();
      });
      const target = new Writable({
        write(chunk: Buffer, _enc, done) {
          sink.push(chunk);
          done();
        },
      });
      try {
        await client.downloadTo(target, file);
      } catch (err) {
        throw failure ?? err;
      }
      if (failure) throw failure;
      return sink.bytes();
    },
    upload: (file, bytes) =>
      atHome(async () => {
        await client.ensureDir(path.posix.dirname(file));
        await client.uploadFrom(Readable.from([bytes]), path.posix.basename(file));
      }),
    async delete(target, folder, recursive) {
      if (!folder) await client.remove(target);
      else if (recursive) await atHome(() => client.removeDir(target));
      else await client.removeEmptyDir(target);
    },
    async rename(from, to, createDirectories) {
      if (createDirectories) await atHome(() => client.ensureDir(path.posix.dirname(to)));
      await client.rename(from, to);
    },
    close: () => client.close(),
  };
}
