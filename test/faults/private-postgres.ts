import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The installed server's binaries (Debian's layout), the newest major first. */
function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const majors = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? path.join(root, majors[0], 'bin') : null;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`: every session is terminated (57P01), the server is back once it returns. */
  restartFast(): Promise<void>;
  /** `pg_ctl stop -m immediate`: no shutdown at all, as a crash or a pulled cable. */
  stopImmediate(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Why a private cluster cannot be made here, or null when it can. */
export function privatePostgresProblem(): string | null {
  if (!binDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  return null;
}

/**
 * A PostgreSQL cluster of the test's own (initdb in a temp folder, a free port, trust auth), never
 * the shared server: the fault tests restart and stop it. Run as the `postgres` user when the test
 * runs as root (PostgreSQL refuses root).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error('PostgreSQL binaries not found');
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'private-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) chownSync(dir, postgresUid(), postgresGid());
  const pgRun = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { timeout: 60_000 })
      : run(path.join(bin, tool), args, { timeout: 60_000 });
  const port = await freePort();
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const log = path.join(dir, 'server.log');
  const ctl = (...args: string[]) => pgRun('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', ...args]);
  await ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restartFast: async () => {
      await ctl('restart', '-m', 'fast');
    },
    stopImmediate: async () => {
      await ctl('stop', '-m', 'immediate');
    },
    start: async () => {
      await ctl('start');
    },
    close: async () => {
      await ctl('stop', '-m', 'immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `postgres` user's ids, for chown. */
function postgresUid(): number {
  return Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
}
function postgresGid(): number {
  return Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
}
