/**
 * Issue 28, the Redis fault: the built platform (`serve`, SQLite, its queue and counters on a private
 * redis-server started here on a free port, never the shared one) under a trickle of `lastNode`
 * webhook calls; Redis is stopped for a few seconds, restarted on the same port (or paused with
 * SIGSTOP and resumed), and the time from Redis answering again to the first webhook answered 200 is
 * measured (goal ≤ 5 s), with the slowest answer any caller waited during the outage (bound 10 s).
 * Medians of ROUNDS rounds. Run alone: `BENCH_ONLY=fault-redis node bench/run.js`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, start, stop, waitHealthy } from '../children.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OUTAGE_MS = Number(process.env.BENCH_FAULT_OUTAGE_MS ?? 5_000);
const CLIENTS = 4;

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

const hasRedisServer = () =>
  new Promise((resolve) => {
    const probe = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    probe.once('error', () => resolve(false));
    probe.once('exit', (code) => resolve(code === 0));
  });

/** A redis-server on `port` saving into `dir`; resolves once it answers PING (redis-cli). */
async function startRedis(port, dir) {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '3600 1', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 200; i++) {
    const pong = await new Promise((resolve) => {
      const cli = spawn('redis-cli', ['-p', String(port), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      cli.stdout.on('data', (c) => {
        out += c;
      });
      cli.once('error', () => resolve(false));
      cli.once('exit', () => resolve(out.trim() === 'PONG'));
    });
    if (pong) return child;
    await sleep(25);
  }
  throw new Error(`redis-server on ${port} did not start`);
}

async function stopRedis(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(late);
}

async function activeWorkflow(url, key) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const body = {
    name: 'bench fault redis',
    nodes: [
      {
        name: 'Webhook',
        type: 'webhook',
        position: [0, 0],
        parameters: {
          path: 'fault-redis',
          responseMode: 'lastNode',
          options: { dedupeKey: '={{ $json.headers["idempotency-key"] }}' },
        },
      },
      { name: 'Set', type: 'set', position: [200, 0], parameters: { values: { n: '={{ $json.body.n }}' } } },
    ],
    connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
  };
  const created = await fetch(`${url}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const activated = await fetch(`${url}/api/v1/workflows/${id}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  if (activated.status !== 200) throw new Error(`activate: ${activated.status}`);
}

/** Callers sending webhooks one after another, each with a fresh Idempotency-Key; answers recorded. */
function trickle(url) {
  const answers = [];
  let n = 0;
  let running = true;
  const client = async () => {
    while (running) {
      const i = n++;
      const at = performance.now();
      let status = 0;
      try {
        const res = await fetch(`${url}/webhook/fault-redis`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `bench-${i}` },
          body: JSON.stringify({ n: i }),
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        status = res.status;
      } catch {}
      answers.push({ at, end: performance.now(), status });
      if (status !== 200) await sleep(50);
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(clients);
    },
  };
}

async function round(how, ctx) {
  const load = trickle(ctx.url);
  try {
    await sleep(1_000);
    const downAt = performance.now();
    if (how === 'paused') ctx.redis.kill('SIGSTOP');
    else await stopRedis(ctx.redis);
    await sleep(OUTAGE_MS);
    if (how === 'paused') ctx.redis.kill('SIGCONT');
    else ctx.redis = await startRedis(ctx.port, ctx.dir);
    const upAt = performance.now();
    for (;;) {
      const ok = load.answers.find((a) => a.status === 200 && a.at >= upAt);
      if (ok) {
        const during = load.answers.filter((a) => a.end >= downAt && a.at <= upAt);
        return {
          recoveryMs: ok.end - upAt,
          slowestMs: Math.max(0, ...during.map((a) => a.end - a.at)),
          other: load.answers.filter((a) => a.status !== 200 && a.status !== 503).length,
        };
      }
      if (performance.now() - upAt > 60_000)
        throw new Error(`no webhook answered 200 within 60 s of Redis (${how})`);
      await sleep(20);
    }
  } finally {
    await load.stop();
  }
}

export async function report() {
  if (!(await hasRedisServer())) return ['fault (Redis): skipped, no redis-server on this machine'];
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-bench-fault-redis-'));
  const port = await freePort();
  const ctx = { port, dir, url: '', redis: await startRedis(port, dir) };
  let platform;
  try {
    const key = generateKey('production');
    platform = await start(
      path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'platform-server.js'),
      {
        DATA_DIR: path.join(dir, 'data'),
        DATABASE_URL: '',
        REDIS_URL: `redis://127.0.0.1:${port}`,
        LOG_LEVEL: 'fatal',
        PORT: '0',
        PLATFORM_BOOTSTRAP_KEY: key,
        RATE_LIMIT_PER_IP: '0',
        RATE_LIMIT_PER_ENDPOINT: '0',
        QUOTA_DAILY_PRODUCTION: '100000000',
      },
      PLATFORM_NODE_FLAGS,
    );
    ctx.url = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(ctx.url);
    await activeWorkflow(ctx.url, key);
    const lines = [];
    for (const how of ['restarted', 'paused']) {
      const runs = [];
      for (let i = 0; i < ROUNDS; i++) runs.push(await round(how, ctx));
      const recovery = median(runs.map((r) => r.recoveryMs));
      const slowest = Math.max(...runs.map((r) => r.slowestMs));
      const other = runs.reduce((sum, r) => sum + r.other, 0);
      lines.push(
        `fault (Redis ${how} ${fmt(OUTAGE_MS)} ms): first webhook 200 ${fmt(recovery)} ms after Redis answers ` +
          `again (median of ${ROUNDS}, goal ≤ 5,000 ms); slowest answer during the outage ${fmt(slowest)} ms ` +
          `(bound 10,000 ms); answers other than 200/503: ${other}`,
      );
    }
    return lines;
  } finally {
    await stop(platform?.child);
    await stopRedis(ctx.redis);
    rmSync(dir, { recursive: true, force: true });
  }
}
