/**
 * Issue 20: how soon a newcomer has a server and an answer. Measured from process spawn to the first
 * 200: the built platform (`node <npm start's flags> dist/main.js serve`, SQLite) on a fresh data
 * directory (migrations and catalogue seed included) and again on that directory (a restart), each
 * against a bare Fastify start (bench/baseline-server.js) in the same round, so a noisy neighbour hits
 * both alike; the median of ROUNDS rounds. Then `npm start`'s build check when the build is current,
 * and the command line's time per command (`platform help`, `keys list`), spawn to exit.
 * Run alone: `BENCH_ONLY=startup node bench/run.js` (run.js reads BENCH_ONLY, not argv).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS } from '../children.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

// No scenario in the shared table (run.js reads `default` as a list of them): only the report below.
export default [];

const fmt = (n, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** SIGTERM, then SIGKILL by pid if it is still alive 2 s later. */
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(late);
}

/** Milliseconds from spawn to the first 200 on `urlPath`; the server is stopped afterwards. */
async function timeToAnswer(args, env, urlPath) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}${urlPath}`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error(`${args.join(' ')}: no answer in 60 s`);
      await sleep(5);
    }
  } finally {
    await stop(child);
  }
}

/** Milliseconds from spawn to a successful exit. */
function timeToExit(args, env = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${args.join(' ')} exited ${code}`)),
    );
  });
}

export async function report() {
  const dirs = [];
  const platformEnv = (dataDir) => ({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    PLATFORM_BOOTSTRAP_KEY: generateKey('production'),
  });
  const serve = [...PLATFORM_NODE_FLAGS, 'dist/main.js', 'serve'];
  const bare = [path.join(here, '..', 'baseline-server.js')];
  const rounds = { bare: [], fresh: [], restart: [], freshRatio: [], restartRatio: [] };
  try {
    await timeToAnswer(bare, {}, '/bare'); // warm-up: file cache
    for (let i = 0; i < ROUNDS; i++) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-startup-'));
      dirs.push(dataDir);
      const env = platformEnv(dataDir);
      const base = await timeToAnswer(bare, {}, '/bare');
      const fresh = await timeToAnswer(serve, env, '/health');
      const restart = await timeToAnswer(serve, env, '/health');
      rounds.bare.push(base);
      rounds.fresh.push(fresh);
      rounds.restart.push(restart);
      rounds.freshRatio.push(fresh / base);
      rounds.restartRatio.push(restart / base);
    }

    const cliDir = dirs[0];
    const cliEnv = platformEnv(cliDir);
    const check = [];
    const help = [];
    const keysList = [];
    for (let i = 0; i < ROUNDS; i++) {
      check.push(await timeToExit(['scripts/ensure-build.mjs']));
      help.push(await timeToExit(['dist/main.js', 'help']));
      keysList.push(await timeToExit(['dist/main.js', 'keys', 'list'], cliEnv));
    }
    const ms = (values) => `${fmt(median(values))} ms`;
    return [
      `startup, first start (fresh SQLite: migrations, seed): ${ms(rounds.fresh)} to /health vs bare Fastify ` +
        `${ms(rounds.bare)} → ratio ${fmt(median(rounds.freshRatio), 1)}`,
      `startup, restart (same data): ${ms(rounds.restart)} to /health vs bare Fastify → ratio ` +
        `${fmt(median(rounds.restartRatio), 1)}`,
      `startup: npm start's build check (build current) ${ms(check)}; CLI spawn to exit: ` +
        `platform help ${ms(help)}, platform keys list ${ms(keysList)}`,
      `startup: medians of ${ROUNDS} rounds, spawn to first 200 (node ${PLATFORM_NODE_FLAGS.join(' ')} ` +
        `dist/main.js serve); figures exclude npm's own start (~0.2–0.4 s for \`npm start\`/\`npm run\`)`,
    ];
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
