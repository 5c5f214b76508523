import type { EventEmitter } from 'node:events';
import fs, { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FtpSrv } from 'ftp-srv';
import { Server, utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshKeyPair } from '../../../../../../test/helpers/ssh-keys.js';
import { createAddressGuard } from '../../../../../core/http/outbound.js';
import { testCredential } from '../../../credentials/connection-test.js';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { Item, WorkflowDefinition } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { FTP_LIMITS } from './files.js';

/**
 * The FTP node against two real servers started here, each serving a temporary folder: ftp-srv (FTP,
 * passive mode) and an ssh2 server answering SFTP from the disk. Reached through the address guard.
 */
// biome-ignore lint/suspicious/noExplicitAny: ssh2's server-side objects are untyped here
type Any = any;
const root = mkdtempSync(path.join(os.tmpdir(), 'ftp-node-'));
const ftpRoot = path.join(root, 'ftp');
const sftpRoot = path.join(root, 'sftp');
let ftpServer: FtpSrv;
let sshServer: Server;
const ports = { ftp: 0, sftp: 0 };
/** ftp-srv logs through a bunyan-shaped logger: this one keeps the test's output clean. */
const quiet = {
  child: () => quiet,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  fatal: () => undefined,
};

/** An SFTP subsystem over a folder of the disk (the calls ssh2-sftp-client and our client make). */
function serveSftp(sftp: Any) {
  const { OPEN_MODE, STATUS_CODE } = utils.sftp;
  const local = (p: string) => path.join(sftpRoot, path.posix.normalize(`/${p}`));
  const handles = new Map<number, { fd?: number; dir?: string; listed?: boolean }>();
  let next = 0;
  const handle = (v: { fd?: number; dir?: string }) => {
    const h = Buffer.alloc(4);
    h.writeUInt32BE(next);
    handles.set(next++, v);
    return h;
  };
  const of = (h: Buffer) => handles.get(h.readUInt32BE(0));
  const attrs = (s: fs.Stats) => ({
    mode: s.mode,
    uid: s.uid,
    gid: s.gid,
    size: s.size,
    atime: Math.floor(s.atimeMs / 1000),
    mtime: Math.floor(s.mtimeMs / 1000),
  });
  const guard = (id: number, work: () => void) => {
    try {
      work();
    } catch (err) {
      const code = (err as { code?: string }).code;
      sftp.status(id, code === 'ENOENT' ? STATUS_CODE.NO_SUCH_FILE : STATUS_CODE.FAILURE, String(err));
    }
  };
  const ok = (id: number) => sftp.status(id, STATUS_CODE.OK);
  sftp.on('OPEN', (id: number, name: string, flags: number) =>
    guard(id, () => {
      const write = (flags & (OPEN_MODE.WRITE as number)) !== 0;
      sftp.handle(id, handle({ fd: fs.openSync(local(name), write ? 'w' : 'r') }));
    }),
  );
  sftp.on('READ', (id: number, h: Buffer, offset: number, length: number) =>
    guard(id, () => {
      const buf = Buffer.alloc(length);
      const n = fs.readSync(of(h)?.fd as number, buf, 0, length, offset);
      if (n === 0) sftp.status(id, STATUS_CODE.EOF);
      else sftp.data(id, buf.subarray(0, n));
    }),
  );
  sftp.on('WRITE', (id: number, h: Buffer, offset: number, data: Buffer) =>
    guard(id, () => {
      fs.writeSync(of(h)?.fd as number, data, 0, data.length, offset);
      ok(id);
    }),
  );
  sftp.on('CLOSE', (id: number, h: Buffer) =>
    guard(id, () => {
      const v = of(h);
      if (v?.fd !== undefined) fs.closeSync(v.fd);
      handles.delete(h.readUInt32BE(0));
      ok(id);
    }),
  );
  sftp.on('FSTAT', (id: number, h: Buffer) =>
    guard(id, () => sftp.attrs(id, attrs(fs.fstatSync(of(h)?.fd as number)))),
  );
  sftp.on('STAT', (id: number, p: string) => guard(id, () => sftp.attrs(id, attrs(fs.statSync(local(p))))));
  sftp.on('LSTAT', (id: number, p: string) => guard(id, () => sftp.attrs(id, attrs(fs.lstatSync(local(p))))));
  sftp.on('OPENDIR', (id: number, p: string) =>
    guard(id, () => {
      if (!fs.statSync(local(p)).isDirectory()) throw new Error('not a directory');
      sftp.handle(id, handle({ dir: local(p) }));
    }),
  );
  sftp.on('READDIR', (id: number, h: Buffer) =>
    guard(id, () => {
      const v = of(h) as { dir: string; listed?: boolean };
      if (v.listed) return sftp.status(id, STATUS_CODE.EOF);
      v.listed = true;
      const names = fs.readdirSync(v.dir).map((filename) => {
        const s = fs.lstatSync(path.join(v.dir, filename));
        return {
          filename,
          longname: `${s.isDirectory() ? 'd' : '-'}rw-r--r-- 1 ada ada ${s.size} ${filename}`,
          attrs: attrs(s),
        };
      });
      sftp.name(id, names);
    }),
  );
  sftp.on('REMOVE', (id: number, p: string) =>
    guard(id, () => {
      fs.unlinkSync(local(p));
      ok(id);
    }),
  );
  sftp.on('RMDIR', (id: number, p: string) =>
    guard(id, () => {
      fs.rmdirSync(local(p));
      ok(id);
    }),
  );
  sftp.on('MKDIR', (id: number, p: string) =>
    guard(id, () => {
      fs.mkdirSync(local(p));
      ok(id);
    }),
  );
  sftp.on('RENAME', (id: number, a: string, b: string) =>
    guard(id, () => {
      fs.renameSync(local(a), local(b));
      ok(id);
    }),
  );
  sftp.on('REALPATH', (id: number, p: string) =>
    sftp.name(id, [{ filename: path.posix.normalize(`/${p}`), longname: '', attrs: {} }]),
  );
}

beforeAll(async () => {
  for (const dir of [ftpRoot, sftpRoot]) {
    mkdirSync(path.join(dir, 'docs'), { recursive: true });
    writeFileSync(path.join(dir, 'docs', 'invoice.txt'), 'total: 42');
  }
  writeFileSync(path.join(ftpRoot, '1KB.zip'), Buffer.alloc(1024, 7));
  ftpServer = new FtpSrv({
    url: 'ftp://127.0.0.1:0',
    pasv_url: '127.0.0.1',
    pasv_min: 30_000,
    pasv_max: 40_000,
    greeting: 'hello',
    log: quiet,
  });
  ftpServer.on('login', ({ username, password }, resolve, reject) =>
    username === 'ada' && password === 'pw' ? resolve({ root: ftpRoot }) : reject(new Error('Bad login')),
  );
  await ftpServer.listen();
  ports.ftp = (ftpServer as unknown as { server: { address(): AddressInfo } }).server.address().port;

  sshServer = new Server({ hostKeys: [sshKeyPair().private] }, (client: EventEmitter) => {
    const c = client as Any;
    c.on('authentication', (auth: Any) =>
      auth.username === 'ada' && auth.method === 'password' && auth.password === 'pw'
        ? auth.accept()
        : auth.reject(),
    );
    c.on('ready', () =>
      c.on('session', (accept: () => Any) => accept().on('sftp', (ok: () => Any) => serveSftp(ok()))),
    );
    c.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => sshServer.listen(0, '127.0.0.1', resolve));
  ports.sftp = sshServer.address().port;
});

afterAll(async () => {
  await ftpServer?.close();
  await new Promise<void>((resolve) => sshServer.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

async function run(
  protocol: 'ftp' | 'sftp',
  parameters: Record<string, unknown>,
  opts: { items?: Item[]; allow?: string[]; password?: string } = {},
) {
  const credentials: Record<string, Record<string, string>> = {
    cred: {
      host: '127.0.0.1',
      port: String(ports[protocol]),
      username: 'ada',
      password: opts.password ?? 'pw',
    },
  };
  const deps = testDeps({
    credential: async (id) => credentials[id] ?? {},
    connectAddress: createAddressGuard(opts.allow ?? ['127.0.0.1']),
  });
  const engine = new WorkflowEngine(deps, defaultNodeRegistry);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'FTP',
        type: 'n8n-nodes-base.ftp',
        typeVersion: 1,
        parameters: { protocol, ...parameters },
        credentials: { [protocol]: { id: 'cred', name: protocol } },
      },
    ],
    [['T', 'FTP']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: opts.items ?? [{ json: {} }] }, ctx);
  const runs = out.state.runData.FTP ?? [];
  return { error: out.state.error, items: runs[runs.length - 1]?.output[0] ?? [] };
}

describe("n8n's own FTP test workflow (test/fixtures/n8n/ftp/4.json, SOURCES-transfer.md)", () => {
  it('imports unmodified and runs: list, download, upload of the downloaded file', async () => {
    const file = path.join(import.meta.dirname, '../../../../../../test/fixtures/n8n/ftp/4.json');
    const def = { ...(JSON.parse(readFileSync(file, 'utf8')) as WorkflowDefinition), id: 'wf_4' };
    const engine = new WorkflowEngine(
      testDeps({
        credential: async (id) => {
          if (id !== '106') throw new Error(`Credential '${id}' not found`);
          return { host: '127.0.0.1', port: String(ports.ftp), username: 'ada', password: 'pw' };
        },
        connectAddress: createAddressGuard(['127.0.0.1']),
      }),
      defaultNodeRegistry,
    );
    expect(engine.validate(def)).toEqual([]);
    const out = await engine.run(def, { nodeName: 'Start', items: [{ json: {} }] }, ctx);
    expect(out.state.error).toBeNull();
    const listed = out.state.runData.FTP1?.[0]?.output[0] ?? [];
    // Listing a file: ftp-srv names it by the path asked for, as some servers do.
    expect(listed.map((i) => [String(i.json.name).replace(/^\//, ''), i.json.size])).toEqual([
      ['1KB.zip', 1024],
    ]);
    const uploaded = fs.readdirSync(path.join(ftpRoot, 'upload'));
    expect(uploaded).toHaveLength(1);
    expect(uploaded[0]).toMatch(/^test\d+\.zip$/);
    expect(readFileSync(path.join(ftpRoot, 'upload', uploaded[0] as string))).toEqual(Buffer.alloc(1024, 7));
  });
});

const text = (s: string) => ({
  mimeType: 'text/plain',
  fileName: 'x.txt',
  data: Buffer.from(s).toString('base64'),
});

describe.each(['ftp', 'sftp'] as const)('n8n-nodes-base.ftp over %s', (protocol) => {
  const disk = () => (protocol === 'ftp' ? ftpRoot : sftpRoot);

  it('uploads (creating folders), lists, downloads, renames and deletes', async () => {
    const up = await run(
      protocol,
      { operation: 'upload', path: '/in/2026/report.txt' },
      { items: [{ json: { n: 1 }, binary: { data: text('quarterly') } }] },
    );
    expect(up.error).toBeNull();
    expect(up.items.map((i) => i.json)).toEqual([{ n: 1 }]);
    expect(readFileSync(path.join(disk(), 'in/2026/report.txt'), 'utf8')).toBe('quarterly');

    const listed = await run(protocol, { operation: 'list', path: '/in', recursive: true });
    expect(listed.error).toBeNull();
    expect(listed.items.map((i) => [i.json.type, i.json.path, i.json.name])).toEqual([
      ['d', '/in/2026', '2026'],
      ['-', '/in/2026/report.txt', 'report.txt'],
    ]);
    expect(listed.items[1]?.json.size).toBe(9);

    const down = await run(protocol, { operation: 'download', path: '/docs/invoice.txt' });
    expect(down.error).toBeNull();
    const bin = down.items[0]?.binary?.data;
    expect(bin).toMatchObject({ fileName: 'invoice.txt', mimeType: 'text/plain' });
    expect(Buffer.from(bin?.data ?? '', 'base64').toString()).toBe('total: 42');

    const moved = await run(protocol, {
      operation: 'rename',
      oldPath: '/in/2026/report.txt',
      newPath: '/archive/old/report.txt',
      options: { createDirectories: true },
    });
    expect(moved.items.map((i) => i.json)).toEqual([{ success: true }]);
    expect(existsSync(path.join(disk(), 'archive/old/report.txt'))).toBe(true);

    const gone = await run(protocol, {
      operation: 'delete',
      path: '/archive',
      options: { folder: true, recursive: true },
    });
    expect(gone.items.map((i) => i.json)).toEqual([{ success: true }]);
    expect(existsSync(path.join(disk(), 'archive'))).toBe(false);
    const file = await run(protocol, { operation: 'delete', path: '/docs/invoice.txt' });
    expect(file.error).toBeNull();
    expect(existsSync(path.join(disk(), 'docs/invoice.txt'))).toBe(false);
    writeFileSync(path.join(disk(), 'docs', 'invoice.txt'), 'total: 42');
  });

  it('fails clearly: missing file, bad login, a line break in a path, an oversize file, a private host; tests the credential', async () => {
    expect((await run(protocol, { operation: 'download', path: '/nope.txt' })).error?.message).toBeTruthy();
    expect(
      (await run(protocol, { operation: 'list', path: '/' }, { password: 'wrong' })).error?.message,
    ).toContain('failed');
    expect(
      (await run(protocol, { operation: 'delete', path: '/a\r\nDELE /docs/invoice.txt' })).error?.message,
    ).toBe("The parameter 'Path' holds a control character");
    const big = path.join(disk(), 'big.bin');
    writeFileSync(big, '');
    fs.truncateSync(big, FTP_LIMITS.fileBytes + 1);
    expect((await run(protocol, { operation: 'download', path: '/big.bin' })).error?.message).toBe(
      `'/big.bin' is larger than ${FTP_LIMITS.fileBytes} bytes: not downloaded`,
    );
    rmSync(big);
    const login = { host: '127.0.0.1', port: String(ports[protocol]), username: 'ada' };
    const guard = createAddressGuard(['127.0.0.1']);
    expect(await testCredential(protocol, { ...login, password: 'pw' }, guard)).toEqual({
      status: 'OK',
      message: 'Connection tested successfully',
    });
    expect((await testCredential(protocol, { ...login, password: 'no' }, guard)).status).toBe('Error');
    expect((await run(protocol, { operation: 'list', path: '/' }, { allow: [] })).error?.message).toBe(
      "Host '127.0.0.1' is not allowed: outbound calls may not reach private or internal addresses",
    );
  });
});
