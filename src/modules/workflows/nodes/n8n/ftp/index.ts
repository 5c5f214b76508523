import path from 'node:path';
import { type Static, Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { guardedAddress } from '../sql/address.js';
import { nodeCredential } from '../sql/credential.js';
import { FTP_LIMITS, type RemoteFiles, remotePath } from './files.js';
import { openFtp } from './ftp-files.js';
import { mimeOf } from './mime.js';
import { openSftp } from './sftp-files.js';

const FtpParameters = Type.Object(
  {
    protocol: Type.Enum(['ftp', 'sftp'] as const, { default: 'ftp' }),
    operation: Type.Enum(['delete', 'download', 'list', 'rename', 'upload'] as const, {
      default: 'download',
    }),
    path: Type.String({ default: '', maxLength: 4_096 }),
    oldPath: Type.String({ default: '', maxLength: 4_096 }),
    newPath: Type.String({ default: '', maxLength: 4_096 }),
    recursive: Type.Boolean({ default: false }),
    binaryData: Type.Boolean({ default: true }),
    binaryPropertyName: Type.String({ default: 'data', maxLength: 200 }),
    fileContent: Type.String({ default: '' }),
    options: Type.Object(
      {
        folder: Type.Optional(Type.Boolean()),
        recursive: Type.Optional(Type.Boolean()),
        createDirectories: Type.Optional(Type.Boolean()),
        timeout: Type.Optional(Type.Number({ minimum: 0 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof FtpParameters>;

/** Connects with the node's `ftp` or `sftp` credential through the outbound-address guard. */
export async function openRemote(
  protocol: 'ftp' | 'sftp',
  c: Record<string, string | undefined>,
  connectAddress: ((host: string, port: number) => Promise<string>) | undefined,
  timeoutMs: number,
): Promise<RemoteFiles> {
  const { address, port } = await guardedAddress(c, connectAddress, protocol === 'ftp' ? 21 : 22, 'FTP');
  if (protocol === 'ftp') {
    // Passive data connections go to the same host on the port the server names: the guard sees it.
    // Each port checked once per session (a recursive listing opens a data connection per folder).
    const allowedPorts = new Set<number>();
    const dataPortAllowed = async (dataPort: number) => {
      if (allowedPorts.has(dataPort)) return;
      try {
        await guardedAddress({ ...c, port: String(dataPort) }, connectAddress, 21, 'FTP');
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new NodeOperationError(
          `The FTP server's data connection (port ${dataPort}) is not allowed: ${reason}. A private FTP server needs its host in OUTBOUND_ALLOW_HOSTS without a port`,
        );
      }
      allowedPorts.add(dataPort);
    };
    const login = { port, user: c.username || 'anonymous', password: c.password ?? '' };
    return openFtp(address, login, timeoutMs, dataPortAllowed);
  }
  if (!c.username) throw new NodeOperationError('The SFTP credential needs a username');
  return openSftp(
    address,
    { port, username: c.username, password: c.password, privateKey: c.privateKey, passphrase: c.passphrase },
    timeoutMs,
  );
}

async function runOne(files: RemoteFiles, p: Params, item: Item, index: number): Promise<Item[]> {
  switch (p.operation) {
    case 'list': {
      const entries = await files.list(remotePath(p.path || '/', 'Path'), p.recursive);
      return entries.map((json) => ({ json }));
    }
    case 'download': {
      const file = remotePath(p.path, 'Path');
      const bytes = await files.download(file);
      const name = path.posix.basename(file);
      return [
        {
          json: item.json,
          binary: { ...(item.binary ?? {}), [p.binaryPropertyName]: binaryOf(bytes, mimeOf(name), name) },
        },
      ];
    }
    case 'upload': {
      const file = remotePath(p.path, 'Path');
      const bytes = p.binaryData
        ? binaryBytes(item, p.binaryPropertyName, index).bytes
        : Buffer.from(p.fileContent, 'utf8');
      await files.upload(file, bytes);
      return [{ json: item.json }];
    }
    case 'delete':
      await files.delete(remotePath(p.path, 'Path'), p.options.folder === true, p.options.recursive === true);
      return [{ json: { success: true } }];
    case 'rename':
      await files.rename(
        remotePath(p.oldPath, 'Old Path'),
        remotePath(p.newPath, 'New Path'),
        p.options.createDirectories === true,
      );
      return [{ json: { success: true } }];
  }
}

/** The run's time: FTP_LIMITS.timeoutMs, cut to what is left of the execution's timeout. */
function timeoutOf(ctx: NodeExecutionContext<unknown>): number {
  const left = ctx.deadlineAt !== undefined ? ctx.deadlineAt - Date.now() : Infinity;
  const ms = Math.min(FTP_LIMITS.timeoutMs, left);
  if (ms <= 0) throw new NodeOperationError('The execution has no time left for a transfer');
  return ms;
}

/**
 * n8n's FTP node (v1): list, download, upload, delete and rename over FTP (credential `ftp`) or SFTP
 * (`sftp`), one connection per run, through the outbound-address guard (private hosts refused unless
 * OUTBOUND_ALLOW_HOSTS names them). Files up to 50 MB, listings up to 10,000 entries, the run bounded
 * in time; a failure is the node's error.
 */
export const ftpNode = defineNode({
  type: 'n8n-nodes-base.ftp',
  versions: [1],
  schema: FtpParameters,
  async execute(ctx) {
    const first = await ctx.params(0);
    const credential = await nodeCredential(ctx, first.protocol);
    const timeoutMs = timeoutOf(ctx);
    let timer: NodeJS.Timeout | undefined;
    let files: RemoteFiles | null = null;
    let over = false;
    const work = (async () => {
      files = await openRemote(first.protocol, credential, ctx.deps.connectAddress, timeoutMs);
      // Connected after the run gave up: nobody will use it.
      if (over) files.close();
      const out: Item[] = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        out.push(...(await runOne(files, p, ctx.items[i] as Item, i)));
      }
      return out;
    })();
    try {
      const out = await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(new NodeOperationError(`The transfer took longer than ${timeoutMs} ms and was stopped`)),
            timeoutMs,
          );
        }),
      ]);
      return output(out);
    } catch (err) {
      if (err instanceof NodeOperationError) throw err;
      throw new NodeOperationError((err as Error).message);
    } finally {
      over = true;
      clearTimeout(timer);
      work.catch(() => undefined);
      (files as RemoteFiles | null)?.close();
    }
  },
});
