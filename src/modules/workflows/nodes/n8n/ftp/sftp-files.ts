import path from 'node:path';
import type { FileEntry, SFTPWrapper } from 'ssh2';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { boundedSink, FTP_LIMITS, joinRemote, type RemoteFiles, tooLarge, tooMany } from './files.js';

export interface SftpLogin {
  port: number;
  username: string;
  password?: string | undefined;
  privateKey?: string | undefined;
  passphrase?: string | undefined;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0x4000;
const S_IFLNK = 0xa000;
const kindOf = (mode: number) =>
  (mode & S_IFMT) === S_IFDIR ? 'd' : (mode & S_IFMT) === S_IFLNK ? 'l' : '-';

/** ssh2-sftp-client's list entry, as n8n's node passes it on (times as dates). */
function entry(e: FileEntry, full: string): Record<string, Json> {
  const mode = e.attrs.mode;
  const bits = (shift: number) =>
    `${mode & (4 << shift) ? 'r' : ''}${mode & (2 << shift) ? 'w' : ''}${mode & (1 << shift) ? 'x' : ''}`;
  return {
    type: kindOf(mode),
    name: e.filename,
    size: e.attrs.size,
    modifyTime: new Date(e.attrs.mtime * 1000).toISOString(),
    accessTime: new Date(e.attrs.atime * 1000).toISOString(),
    rights: { user: bits(6), group: bits(3), other: bits(0) },
    owner: e.attrs.uid,
    group: e.attrs.gid,
    longname: e.longname,
    path: full,
  };
}

const call = <T>(run: (cb: (err: Error | undefined, v: T) => void) => void) =>
  new Promise<T>((resolve, reject) => run((err, v) => (err ? reject(err) : resolve(v))));

/** SFTP over ssh2, connected to the address the outbound guard answered. */
export async function openSftp(address: string, login: SftpLogin, timeoutMs: number): Promise<RemoteFiles> {
  // ssh2 loads on first use, not at every start.
  const { Client } = await import('ssh2');
  const client = new Client();
  const sftp = await new Promise<SFTPWrapper>((resolve, reject) => {
    client.once('error', (err: Error) =>
      reject(new NodeOperationError(`SFTP connection to port ${login.port} failed: ${err.message}`)),
    );
    client.once('ready', () => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
    client.connect({
      host: address,
      port: login.port,
      username: login.username,
      ...(login.password ? { password: login.password } : {}),
      ...(login.privateKey ? { privateKey: login.privateKey } : {}),
      ...(login.passphrase ? { passphrase: login.passphrase } : {}),
      readyTimeout: Math.min(timeoutMs, 20_000),
    });
  }).catch((err: Error) => {
    client.end();
    throw err;
  });
  client.on('error', () => undefined);

  const readdir = (dir: string) => call<FileEntry[]>((cb) => sftp.readdir(dir, cb));
  const isDir = (p: string) =>
    call<{ isDirectory(): boolean }>((cb) => sftp.lstat(p, cb)).then(
      (s) => s.isDirectory(),
      () => null,
    );
  /** `mkdir -p`, as ssh2-sftp-client's mkdir(dir, true). */
  const ensureDir = async (dir: string): Promise<void> => {
    if (dir === '/' || dir === '.' || (await isDir(dir))) return;
    await ensureDir(path.posix.dirname(dir));
    await call<undefined>((cb) => sftp.mkdir(dir, (err) => cb(err, undefined)));
  };
  const removeTree = async (dir: string, depth: number, budget: { left: number }): Promise<void> => {
    if (depth > FTP_LIMITS.depth) throw new NodeOperationError(`'${dir}' is nested too deep to delete`);
    for (const e of await readdir(dir)) {
      if (e.filename === '.' || e.filename === '..') continue;
      if (--budget.left < 0) throw tooMany();
      const full = joinRemote(dir, e.filename);
      if ((e.attrs.mode & S_IFMT) === S_IFDIR) await removeTree(full, depth + 1, budget);
      else await call<undefined>((cb) => sftp.unlink(full, (err) => cb(err, undefined)));
    }
    await call<undefined>((cb) => sftp.rmdir(dir, (err) => cb(err, undefined)));
  };

  return {
    async list(dir, recursive) {
      const out: Array<Record<string, Json>> = [];
      const walk = async (at: string, depth: number) => {
        for (const e of await readdir(at)) {
          if (e.filename === '.' || e.filename === '..') continue;
          if (out.length >= FTP_LIMITS.listEntries) throw tooMany();
          const full = joinRemote(at, e.filename);
          out.push(entry(e, full));
          if (recursive && (e.attrs.mode & S_IFMT) === S_IFDIR && depth < FTP_LIMITS.depth)
            await walk(full, depth + 1);
        }
      };
      await walk(dir, 0);
      return out;
    },
    async download(file) {
      const size = await call<{ size: number }>((cb) => sftp.stat(file, cb));
      if (size.size > FTP_LIMITS.fileBytes) throw tooLarge(file);
      return new Promise<Buffer>((resolve, reject) => {
        const stream = sftp.createReadStream(file);
        const sink = boundedSink(file, (err) => {
          stream.destroy();
          reject(err);
        });
        stream.on('data', (chunk: Buffer) => sink.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          if (!sink.over) resolve(sink.bytes());
        });
      });
    },
    async upload(file, bytes) {
      await ensureDir(path.posix.dirname(file));
      await new Promise<void>((resolve, reject) => {
        const stream = sftp.createWriteStream(file);
        stream.on('error', reject);
        stream.on('close', () => resolve());
        stream.end(bytes);
      });
    },
    async delete(target, folder, recursive) {
      if (!folder) return call<undefined>((cb) => sftp.unlink(target, (err) => cb(err, undefined)));
      if (recursive) return removeTree(target, 0, { left: FTP_LIMITS.listEntries });
      return call<undefined>((cb) => sftp.rmdir(target, (err) => cb(err, undefined)));
    },
    async rename(from, to, createDirectories) {
      if (createDirectories) await ensureDir(path.posix.dirname(to));
      await call<undefined>((cb) => sftp.rename(from, to, (err) => cb(err, undefined)));
    },
    close: () => client.end(),
  };
}
