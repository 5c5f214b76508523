import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

/** A port nobody listens on now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether the fault suites can start a redis-server of their own; under CI=true its absence fails. */
export async function redisServerAvailable(): Promise<boolean> {
  const found = await new Promise<boolean>((resolve) => {
    const probe = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    probe.once('error', () => resolve(false));
    probe.once('exit', (code) => resolve(code === 0));
  });
  if (found) return true;
  if (process.env.CI === 'true' || process.env.CI === '1')
    throw new Error('The fault suites need redis-server on the PATH under CI=true');
  console.warn('[skip] no redis-server on the PATH: the Redis fault suites are skipped');
  return false;
}

/**
 * A redis-server of the test's own on a free port (never the shared one), saving to a folder of
 * its own so a restart on the same port finds its data (as a production restart does).
 */
export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGSTOP: the server keeps its sockets open and answers nothing (a hung host, a network blip). */
  pause(): void;
  resume(): void;
  /** Stops the server (SIGTERM: it saves, then exits), resolving once it has exited. */
  shutdown(): Promise<void>;
  /** Starts it again on the same port with the same data, resolving once it answers. */
  restart(): Promise<void>;
  /** Ends it (SIGKILL after a grace period) and removes its folder. */
  close(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'fault-redis-'));
  let child: ChildProcess | null = null;
  const exitOf = (proc: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
    });
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '3600 1', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
    probe.on('error', () => undefined);
    try {
      const end = Date.now() + 10_000;
      for (;;) {
        try {
          if (probe.status === 'wait') await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          // not up yet
        }
        if (Date.now() > end) throw new Error(`redis-server on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      probe.disconnect();
    }
  };
  const stop = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc) return;
    // A paused server must run again to hear SIGTERM.
    proc.kill('SIGCONT');
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exitOf(proc);
    clearTimeout(timer);
    child = null;
  };
  await launch();
  process.once('exit', () => child?.kill('SIGKILL'));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    shutdown: () => stop('SIGTERM'),
    restart: launch,
    async close() {
      child?.kill('SIGCONT');
      await stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
