import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The platform as its users start it: `node --import tsx src/main.ts …` (as test/core/cli-and-process). */
const MAIN = path.resolve('src/main.ts');

const children = new Set<ChildProcess>();
const dirs: string[] = [];

// Last resort: a failed run must not leave servers behind.
process.once('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

export function tempDir(prefix = 'platform-proc-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Settings every child gets: nothing inherited that points elsewhere, limits out of the way. */
export function baseEnv(dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    WORKFLOWS_DIR: path.join(dataDir, 'no-shipped-workflows'),
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_ENDPOINT: '1000000',
    AUTH_FAILURES_PER_IP: '100000',
    SHUTDOWN_GRACE_MS: '2000',
  };
}

export interface PlatformProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Waits until stdout or stderr matches; fails early if the process exits. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startProcess(args: string[], env: Record<string, string>): PlatformProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    output: () => out,
    exited,
    async waitFor(pattern, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = pattern.exec(out);
        if (found) return found;
        if (done) throw new Error(`${args.join(' ')} exited before ${pattern}:\n${out.slice(-3000)}`);
        if (Date.now() > end)
          throw new Error(`${args.join(' ')}: no ${pattern} in time:\n${out.slice(-3000)}`);
        await sleep(25);
      }
    },
    async kill(signal = 'SIGTERM') {
      if (!done) child.kill(signal);
      return exited;
    },
  };
}

/** Starts `serve …` on a free port (PORT=0) and returns it with its base URL from the listen log. */
export async function startServer(
  args: string[],
  env: Record<string, string>,
): Promise<PlatformProcess & { url: string }> {
  const proc = startProcess(args, env);
  try {
    const found = await proc.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
    return { ...proc, url: found[1] as string };
  } catch (error) {
    await proc.kill('SIGKILL');
    throw error;
  }
}

/** Kills what is still running and removes the temp folders. */
export async function cleanup(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A JSON answer, read loosely: the assertions check its shape. */
// biome-ignore lint/suspicious/noExplicitAny: tests index into API answers freely
type Loose = any;

/** JSON over HTTP with the platform key (Bearer). */
export function apiClient(base: string, key: string) {
  return async (method: string, url: string, body?: unknown): Promise<{ status: number; json: Loose }> => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
}

export type Api = ReturnType<typeof apiClient>;

export async function createAndActivate(api: Api, body: unknown): Promise<string> {
  const created = await api('POST', '/api/v1/workflows', body);
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
  const id = created.json.id as string;
  const activated = await api('POST', `/api/v1/workflows/${id}/activate`);
  if (activated.status !== 200)
    throw new Error(`activate: ${activated.status} ${JSON.stringify(activated.json)}`);
  return id;
}

/** Polls until `check` returns a value other than undefined. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A downstream on 127.0.0.1 that answers after `delayMs`, counting calls by their `n`. */
export async function slowServer(delayMs: number) {
  const state = { inFlight: 0, completed: 0, calls: new Map<string, number>() };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '?';
    state.calls.set(n, (state.calls.get(n) ?? 0) + 1);
    state.inFlight++;
    res.on('error', () => undefined);
    req.socket.on('error', () => undefined);
    setTimeout(() => {
      state.inFlight--;
      state.completed++;
      if (!res.destroyed) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ slow: true, n }));
      }
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A workflow of one Schedule Trigger firing every `seconds`, as n8n exports it. */
export function everySeconds(name: string, seconds: number) {
  return {
    name,
    nodes: [
      {
        id: 'tick',
        name: 'Schedule Trigger',
        type: 'n8n-nodes-base.scheduleTrigger',
        typeVersion: 1.2,
        position: [0, 0],
        parameters: { rule: { interval: [{ field: 'seconds', secondsInterval: seconds }] } },
      },
    ],
    connections: {},
  };
}
