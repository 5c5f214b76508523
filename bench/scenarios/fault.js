/**
 * Issue 28: how soon the platform serves again after PostgreSQL comes back. A private PostgreSQL
 * cluster (initdb on a free port, never the shared server) under the built platform
 * (`node <npm start's flags> dist/main.js serve`), webhook callers firing all along; PostgreSQL is
 * restarted (`pg_ctl restart -m fast`) and stopped hard then started (`-m immediate`), ROUNDS times
 * each. Reported: milliseconds from the server's return (pg_ctl done) to the first 2xx webhook
 * answer of a call started after it; median and worst. Goal: ≤ 5 s.
 * Run alone: `BENCH_ONLY=fault node bench/run.js`. Skipped with a line where no PostgreSQL binaries are.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS } from '../children.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const run = promisify(execFile);

export default [];

const fmt = (n) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

function pgBin() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const major = readdirSync(base)
    .filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return major ? path.join(base, major, 'bin') : null;
}

/** A PostgreSQL cluster of this run's own; as the `postgres` user when run as root. */
async function privatePostgres(bin) {
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-pg-'));
  if (asRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const pg = (tool, args) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { timeout: 60_000 })
      : run(path.join(bin, tool), args, { timeout: 60_000 });
  const port = await freePort();
  const data = path.join(dir, 'data');
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const ctl = (...args) =>
    pg('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', ...args]);
  await ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    ctl,
    close: async () => {
      await ctl('stop', '-m', 'immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(late);
}

/** Callers POSTing to the webhook, 4 at a time, remembering when each 2xx call started and ended. */
function callers(url) {
  const accepted = [];
  let running = true;
  const lane = async () => {
    while (running) {
      const startedAt = Date.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"bench":true}',
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        if (res.ok) accepted.push({ startedAt, endedAt: Date.now() });
        else await sleep(20);
      } catch {
        await sleep(20);
      }
    }
  };
  const lanes = [lane(), lane(), lane(), lane()];
  return {
    /** Milliseconds from `since` to the end of the first 2xx call started at or after it. */
    async firstAfter(since) {
      const limit = since + 60_000;
      for (;;) {
        const hit = accepted.find((a) => a.startedAt >= since);
        if (hit) return hit.endedAt - since;
        if (Date.now() > limit) throw new Error('no webhook accepted within 60 s of the server coming back');
        await sleep(5);
      }
    },
    stop: async () => {
      running = false;
      await Promise.all(lanes);
    },
  };
}

export async function report() {
  const bin = pgBin();
  if (!bin) return ['\nfault: skipped (no PostgreSQL server binaries under /usr/lib/postgresql)'];
  const server = await privatePostgres(bin);
  const key = generateKey('production');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-fault-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...PLATFORM_NODE_FLAGS, 'dist/main.js', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: server.url,
      REDIS_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      PLATFORM_BOOTSTRAP_KEY: key,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      WORKFLOWS_DIR: path.join(dataDir, 'none'),
      RATE_LIMIT_PER_IP: '0',
      RATE_LIMIT_PER_ENDPOINT: '0',
    },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
      if (
        await fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 1200) throw new Error('the platform did not start');
      await sleep(50);
    }
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const flow = {
      name: 'bench-fault',
      nodes: [
        { name: 'Webhook', type: 'webhook', position: [0, 0], parameters: { path: 'bench-fault' } },
        { name: 'Set', type: 'set', position: [200, 0], parameters: { values: { ok: true } } },
      ],
      connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
    };
    const created = await (
      await fetch(`${base}/api/v1/workflows`, { method: 'POST', headers: auth, body: JSON.stringify(flow) })
    ).json();
    await fetch(`${base}/api/v1/workflows/${created.id}/activate`, { method: 'POST', headers: auth });
    const load = callers(`${base}/webhook/bench-fault`);
    const restart = [];
    const hard = [];
    try {
      await load.firstAfter(Date.now());
      for (let round = 0; round < ROUNDS; round++) {
        await server.ctl('restart', '-m', 'fast');
        restart.push(await load.firstAfter(Date.now()));
        await server.ctl('stop', '-m', 'immediate');
        await sleep(2_000); // down for a while: callers get 503s meanwhile
        await server.ctl('start');
        hard.push(await load.firstAfter(Date.now()));
      }
    } finally {
      await load.stop();
    }
    const alive = child.exitCode === null && child.signalCode === null;
    const line = (what, values) =>
      `  ${what.padEnd(44)} median ${fmt(median(values)).padStart(6)} ms, worst ${fmt(Math.max(...values)).padStart(6)} ms (goal ≤ 5,000)`;
    return [
      `\nfault: PostgreSQL back → first 2xx webhook (${ROUNDS} rounds each; serve ${alive ? 'stayed up' : 'EXITED'})`,
      line('pg_ctl restart -m fast', restart),
      line('pg_ctl stop -m immediate, 2 s down, start', hard),
    ];
  } finally {
    await stop(child);
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
