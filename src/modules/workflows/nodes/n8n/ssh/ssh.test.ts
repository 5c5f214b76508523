import { timingSafeEqual } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { Server, utils } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshKeyPair } from '../../../../../../test/helpers/ssh-keys.js';
import { checkedTcpTarget } from '../../../../../core/http/outbound.js';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { SSH_OFF } from './index.js';

/**
 * The SSH node against an ssh2 server started here (password and public-key logins, exec, and an
 * in-memory SFTP file system), reached through the outbound-address guard.
 */
const { OPEN_MODE, STATUS_CODE } = utils.sftp as {
  OPEN_MODE: Record<string, number>;
  STATUS_CODE: Record<string, number>;
};
const userKey = sshKeyPair();
const files = new Map<string, Buffer>([['/srv/hello.txt', Buffer.from('hello from ssh')]]);
const commands: string[] = [];
let server: Server;
let port = 0;

// biome-ignore lint/suspicious/noExplicitAny: ssh2's server-side objects are untyped here
type Any = any;

function serveSftp(sftp: Any) {
  const handles = new Map<number, string>();
  let next = 0;
  const nameOf = (h: Buffer) => handles.get(h.readUInt32BE(0));
  const attrs = (data: Buffer) => ({ mode: 0o100644, uid: 0, gid: 0, size: data.length, atime: 0, mtime: 0 });
  sftp.on('OPEN', (id: number, filename: string, flags: number) => {
    const writing = (flags & (OPEN_MODE.WRITE as number)) !== 0;
    if (!writing && !files.has(filename)) return sftp.status(id, STATUS_CODE.NO_SUCH_FILE);
    if (writing) files.set(filename, Buffer.alloc(0));
    const h = Buffer.alloc(4);
    h.writeUInt32BE(next);
    handles.set(next++, filename);
    sftp.handle(id, h);
  });
  sftp.on('READ', (id: number, h: Buffer, offset: number, length: number) => {
    const data = files.get(nameOf(h) ?? '') ?? Buffer.alloc(0);
    if (offset >= data.length) return sftp.status(id, STATUS_CODE.EOF);
    sftp.data(id, data.subarray(offset, offset + length));
  });
  sftp.on('WRITE', (id: number, h: Buffer, offset: number, chunk: Buffer) => {
    const name = nameOf(h) ?? '';
    const cur = files.get(name) ?? Buffer.alloc(0);
    const grown = Buffer.alloc(Math.max(cur.length, offset + chunk.length));
    cur.copy(grown);
    chunk.copy(grown, offset);
    files.set(name, grown);
    sftp.status(id, STATUS_CODE.OK);
  });
  sftp.on('CLOSE', (id: number, h: Buffer) => {
    handles.delete(h.readUInt32BE(0));
    sftp.status(id, STATUS_CODE.OK);
  });
  const stat = (id: number, name: string) => {
    const data = files.get(name);
    if (!data) return sftp.status(id, STATUS_CODE.NO_SUCH_FILE);
    sftp.attrs(id, attrs(data));
  };
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);
  sftp.on('FSTAT', (id: number, h: Buffer) => stat(id, nameOf(h) ?? ''));
}

beforeAll(async () => {
  const hostKey = sshKeyPair().private;
  const allowed = utils.parseKey(userKey.public) as Any;
  server = new Server({ hostKeys: [hostKey] }, (client: EventEmitter) => {
    const c = client as Any;
    c.on('authentication', (auth: Any) => {
      if (auth.username !== 'ada') return auth.reject();
      if (auth.method === 'password' && auth.password === 'pw') return auth.accept();
      if (auth.method === 'publickey') {
        const own = allowed.getPublicSSH() as Buffer;
        const same = auth.key.data.length === own.length && timingSafeEqual(auth.key.data, own);
        if (same && (!auth.signature || allowed.verify(auth.blob, auth.signature, auth.hashAlgo)))
          return auth.accept();
      }
      auth.reject();
    });
    c.on('ready', () => {
      c.on('session', (accept: () => Any) => {
        const session = accept();
        session.on('exec', (ok: () => Any, _no: unknown, info: { command: string }) => {
          commands.push(info.command);
          const stream = ok();
          if (info.command.includes('flood')) {
            stream.write(Buffer.alloc(64 * 1024, 'x'));
          } else {
            stream.write(`ran: ${info.command}\n`);
            stream.stderr.write('note\n');
          }
          stream.exit(info.command.includes('fail') ? 2 : 0);
          stream.end();
        });
        session.on('sftp', (ok: () => Any) => serveSftp(ok()));
      });
    });
    c.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const access = (enabled: boolean, allowHosts: string[], maxOutputBytes = 16 * 1024): HostAccess => ({
  filesDir: null,
  executeCommand: { enabled: false, timeoutMs: 5_000, maxOutputBytes },
  ssh: { enabled, timeoutMs: 10_000, maxOutputBytes },
  tcpTarget: (host, p) => checkedTcpTarget(host, p, allowHosts),
});

async function run(
  parameters: Record<string, unknown>,
  opts: { enabled?: boolean; allow?: string[]; key?: boolean; items?: Item[]; maxOutputBytes?: number } = {},
) {
  const credentials: Record<string, Record<string, string>> = {
    cred_pw: { host: '127.0.0.1', port: String(port), username: 'ada', password: 'pw' },
    cred_key: { host: '127.0.0.1', port: String(port), username: 'ada', privateKey: userKey.private },
  };
  const deps = testDeps({
    host: access(opts.enabled ?? true, opts.allow ?? ['127.0.0.1'], opts.maxOutputBytes),
    credential: async (id) => credentials[id] ?? {},
  });
  const engine = new WorkflowEngine(deps, defaultNodeRegistry);
  const credentialsOf: Record<string, { id: string; name: string }> = opts.key
    ? { sshPrivateKey: { id: 'cred_key', name: 'key' } }
    : { sshPassword: { id: 'cred_pw', name: 'pw' } };
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'S',
        type: 'n8n-nodes-base.ssh',
        typeVersion: 1,
        parameters: { ...(opts.key ? { authentication: 'privateKey' } : {}), ...parameters },
        credentials: credentialsOf,
      },
    ],
    [['T', 'S']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: opts.items ?? [{ json: {} }] }, ctx);
  const runs = out.state.runData.S ?? [];
  return { def, engine, error: out.state.error, items: runs[runs.length - 1]?.output[0] ?? [] };
}

describe('n8n-nodes-base.ssh', () => {
  it('executes a command in a directory with a password login', async () => {
    const { error, items } = await run({ command: 'uptime', cwd: '/srv/app' });
    expect(error).toBeNull();
    expect(items.map((i) => i.json)).toEqual([
      { code: 0, signal: null, stdout: "ran: cd '/srv/app' && uptime", stderr: 'note' },
    ]);
    expect(commands.at(-1)).toBe("cd '/srv/app' && uptime");
  });

  it('executes with a private-key login and reports a non-zero exit code', async () => {
    const { error, items } = await run({ command: 'fail now', cwd: '' }, { key: true });
    expect(error).toBeNull();
    expect(items[0]?.json).toMatchObject({ code: 2, stdout: 'ran: fail now' });
  });

  it('downloads a file into binary data and uploads one from binary data', async () => {
    const down = await run({ resource: 'file', operation: 'download', path: '/srv/hello.txt' });
    expect(down.error).toBeNull();
    const bin = down.items[0]?.binary?.data;
    expect(bin?.fileName).toBe('hello.txt');
    expect(Buffer.from(bin?.data ?? '', 'base64').toString()).toBe('hello from ssh');

    const data = {
      mimeType: 'text/plain',
      fileName: 'up.txt',
      data: Buffer.from('uploaded').toString('base64'),
    };
    const up = await run(
      { resource: 'file', operation: 'upload', path: '/srv/in' },
      { items: [{ json: {}, binary: { data } }] },
    );
    expect(up.error).toBeNull();
    expect(up.items.map((i) => i.json)).toEqual([{ success: true }]);
    expect(files.get('/srv/in/up.txt')?.toString()).toBe('uploaded');
  });

  it('a missing remote file is a node error', async () => {
    const { error } = await run({ resource: 'file', operation: 'download', path: '/srv/nope.txt' });
    expect(error?.message).toContain("The download failed: '/srv/nope.txt'");
  });

  it('bounds a command output', async () => {
    const { error } = await run({ command: 'flood' }, { maxOutputBytes: 4_096 });
    expect(error?.message).toBe('The command failed: its output passed 4096 bytes');
  });

  it('goes through the outbound-address guard: a private host is refused unless allowed', async () => {
    const { error } = await run({ command: 'uptime' }, { allow: [] });
    expect(error?.message).toBe(
      "Host '127.0.0.1' is not allowed: outbound calls may not reach private or internal addresses",
    );
  });

  it('is off unless WORKFLOW_SSH_ENABLED: refused at save and failing at run, naming the setting', async () => {
    const before = commands.length;
    const { error, def, engine } = await run({ command: 'uptime' }, { enabled: false });
    expect(error?.message).toBe(SSH_OFF);
    expect(SSH_OFF).toContain('WORKFLOW_SSH_ENABLED');
    expect(commands.length).toBe(before);
    expect(engine.validate(def)).toEqual([{ path: 'nodes[1].parameters', message: SSH_OFF }]);
  });
});
