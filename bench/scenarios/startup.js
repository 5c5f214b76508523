/**
 * Issue 20: how soon a newcomer has a server and an answer. Measured from process spawn to the first
 * 200: the built platform (`node <npm start's flags> dist/main.js serve`, SQLite) on a fresh data
 * directory (migrations and catalogue seed included) and again on that directory (a restart), each
 * against a bare Fastify start (bench/baseline-server.js) in the same round, so a noisy neighbour hits
 * both alike; the median of ROUNDS rounds. Then `npm start`'s build check when the build is current,
 * and the command line's time per command (`platform help`, `keys list`), spawn to exit.
 * Issue 29: the restart's first webhook, sent as soon as /health answers (an active n8n webhook → Set
 * whose JavaScript expression runs in the sandbox, created during the first start), and the CPU time
 * of `keys list` beside its wall time. Goals: /health ≤ 1.5 s, first webhook ≤ 1 s after it, `keys
 * list` ≤ 0.5 s (on a quiet machine: on a loaded one the CPU figures say more than the wall times).
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

/**
 * Milliseconds from spawn to the first 200 on `urlPath`, and what `after(baseUrl)` returns once it has
 * answered; the server is stopped afterwards.
 */
async function timeToAnswer(args, env, urlPath, after = async () => undefined) {
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
      if (ok) {
        const answered = performance.now() - started;
        return { ms: answered, after: await after(`http://127.0.0.1:${port}`) };
      }
      if (performance.now() - started > 60_000) throw new Error(`${args.join(' ')}: no answer in 60 s`);
      await sleep(5);
    }
  } finally {
    await stop(child);
  }
}

/** Prints the process's CPU time (user + system, ms) on fd 3 as it exits. */
const CPU_REPORT = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); " +
    'writeSync(3, String((u.user + u.system) / 1000)); });',
)}`;

/** Milliseconds from spawn to a successful exit, and the child's CPU milliseconds. */
function timeToExit(args, env = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', CPU_REPORT, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
    });
    let cpu = '';
    child.stdio[3].on('data', (chunk) => {
      cpu += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - started, cpu: Number(cpu) })
        : reject(new Error(`${args.join(' ')} exited ${code}`)),
    );
  });
}

/** A webhook → Set workflow whose expression needs the sandbox (a method call), created and activated. */
async function activateFirstWebhook(baseUrl, key) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const nodes = [
    {
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      position: [0, 0],
      parameters: { httpMethod: 'POST', path: 'startup-first', responseMode: 'lastNode', options: {} },
    },
    {
      name: 'Set',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [200, 0],
      parameters: {
        assignments: {
          assignments: [
            { id: 'a', name: 'label', value: '={{ $json.body.name.toUpperCase() }}', type: 'string' },
          ],
        },
        options: {},
      },
    },
  ];
  const connections = { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } };
  const created = await fetch(`${baseUrl}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'startup first webhook', nodes, connections }),
  });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const activated = await fetch(`${baseUrl}/api/v1/workflows/${id}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${await activated.text()}`);
}

/** Milliseconds to the webhook's answer, checked: the expression ran. */
async function firstWebhook(baseUrl) {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/webhook/startup-first`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ada' }),
  });
  const body = await response.text();
  if (response.status !== 200 || !body.includes('ADA'))
    throw new Error(`first webhook: ${response.status} ${body}`);
  return performance.now() - started;
}

export async function report() {
  const dirs = [];
  const platformEnv = (dataDir, key = generateKey('production')) => ({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    PLATFORM_BOOTSTRAP_KEY: key,
  });
  const serve = [...PLATFORM_NODE_FLAGS, 'dist/main.js', 'serve'];
  const bare = [path.join(here, '..', 'baseline-server.js')];
  const rounds = { bare: [], fresh: [], restart: [], freshRatio: [], restartRatio: [], webhook: [] };
  try {
    await timeToAnswer(bare, {}, '/bare'); // warm-up: file cache
    for (let i = 0; i < ROUNDS; i++) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-startup-'));
      dirs.push(dataDir);
      const key = generateKey('production');
      const env = platformEnv(dataDir, key);
      const { ms: base } = await timeToAnswer(bare, {}, '/bare');
      const { ms: fresh } = await timeToAnswer(serve, env, '/health', (url) =>
        activateFirstWebhook(url, key),
      );
      const { ms: restart, after: webhook } = await timeToAnswer(serve, env, '/health', firstWebhook);
      rounds.bare.push(base);
      rounds.fresh.push(fresh);
      rounds.restart.push(restart);
      rounds.webhook.push(webhook);
      rounds.freshRatio.push(fresh / base);
      rounds.restartRatio.push(restart / base);
    }

    const cliDir = dirs[0];
    const cliEnv = platformEnv(cliDir);
    const check = [];
    const help = [];
    const keysList = [];
    const keysListCpu = [];
    for (let i = 0; i < ROUNDS; i++) {
      check.push((await timeToExit(['scripts/ensure-build.mjs'])).ms);
      help.push((await timeToExit(['dist/main.js', 'help'])).ms);
      const keys = await timeToExit(['dist/main.js', 'keys', 'list'], cliEnv);
      keysList.push(keys.ms);
      keysListCpu.push(keys.cpu);
    }
    const ms = (values) => `${fmt(median(values))} ms`;
    return [
      `startup, first start (fresh SQLite: migrations, seed): ${ms(rounds.fresh)} to /health vs bare Fastify ` +
        `${ms(rounds.bare)} → ratio ${fmt(median(rounds.freshRatio), 1)}`,
      `startup, restart (same data): ${ms(rounds.restart)} to /health vs bare Fastify → ratio ` +
        `${fmt(median(rounds.restartRatio), 1)}; first webhook (n8n webhook → Set, sandboxed expression) ` +
        `${ms(rounds.webhook)} after /health (goals: 1,500 ms and 1,000 ms)`,
      `startup: npm start's build check (build current) ${ms(check)}; CLI spawn to exit: ` +
        `platform help ${ms(help)}, platform keys list ${ms(keysList)} (${ms(keysListCpu)} of CPU; goal 500 ms)`,
      `startup: medians of ${ROUNDS} rounds, spawn to first 200 (node ${PLATFORM_NODE_FLAGS.join(' ')} ` +
        `dist/main.js serve); figures exclude npm's own start (~0.2–0.4 s for \`npm start\`/\`npm run\`)`,
    ];
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
