// Child processes of the benchmarks that start their own servers (llm, knowledge): started like
// run.js's, reporting their port over IPC, stopped by pid with SIGKILL after a grace period.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bench = path.dirname(fileURLToPath(import.meta.url));

const startScript = JSON.parse(readFileSync(path.join(bench, '..', 'package.json'), 'utf8')).scripts.start;
// BENCH_NODE_FLAGS adds flags, as in run.js (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a report's children).
export const PLATFORM_NODE_FLAGS = [
  ...(/node ((?:--\S+ )*)dist\/main\.js/.exec(startScript)?.[1].trim().split(' ') ?? []),
  ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
];

/** Forks a server that reports its port over IPC (as run.js does). */
/**
 * The settings of a bench platform child: SQLite in a data folder of its own, no Redis, no quota or
 * rate limit in the way of the load; `extra` adds settings or overrides these.
 */
export function platformEnv(dataDir, key, extra = {}) {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    PORT: '0',
    PLATFORM_BOOTSTRAP_KEY: key,
    QUOTA_DAILY_PRODUCTION: '100000000',
    RATE_LIMIT_PER_IP: '0',
    RATE_LIMIT_PER_ENDPOINT: '0',
    ...extra,
  };
}

export function start(script, env, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], {
      execArgv,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.once('message', (msg) => resolve({ child, port: msg.port }));
  });
}

/** SIGTERM, then SIGKILL if the child is still alive 2 s later. */
export async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve('late'), 2000);
  });
  if ((await Promise.race([exited, late])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

export async function waitHealthy(url) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
