// `npm run bench`: each scenario against the platform, beside a bare Fastify route measured
// in the same run, so the ratios hold on a noisy machine. Servers run in child processes so
// their resident memory is their own.
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKey } from '../dist/modules/auth/key-format.js';
import { stop } from './children.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

// The platform runs with the Node flags of `npm start` (young-generation sizing, docs/decisions.md).
const startScript = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8')).scripts.start;
// BENCH_NODE_FLAGS adds flags to the platform's (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
const PLATFORM_NODE_FLAGS = [
  ...(/node ((?:--\S+ )*)dist\/main\.js/.exec(startScript)?.[1].trim().split(' ') ?? []),
  ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
];

// Children and temp folders are ended on any exit, a failed scenario's included: a bench that throws
// must not leave servers running (or a pipe of its output open).
const started = [];
const tempDirs = [];
process.on('exit', () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function start(script, args, env, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(script, args, {
      execArgv,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    started.push(child);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.once('message', (msg) => resolve({ child, port: msg.port }));
  });
}

async function waitHealthy(url) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

async function load(baseUrl, request, duration = DURATION) {
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body,
        // A scenario may vary each request (for example a unique name per create).
        ...(request.setupRequest ? { setupRequest: request.setupRequest } : {}),
      },
    ],
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  return { rps: result.requests.average, p99: result.latency.p99, bad, total: result.requests.total };
}

const fmt = (n, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main() {
  const scenarioFiles = readdirSync(path.join(here, 'scenarios'))
    .filter((f) => f.endsWith('.js'))
    // The core scenario first, so its memory figure is the platform's before other services' load.
    .sort((a, b) => (a === 'core.js' ? -1 : b === 'core.js' ? 1 : a.localeCompare(b)));
  const only = process.env.BENCH_ONLY;
  const scenarios = [];
  const reports = [];
  for (const file of scenarioFiles) {
    const mod = await import(path.join(here, 'scenarios', file));
    for (const s of [mod.default].flat()) if (!only || s.name.includes(only)) scenarios.push(s);
    // A scenario file may also export `report({baseUrl, key})`: a one-off run printing its own lines.
    if (mod.report && (!only || file.includes(only))) reports.push(mod.report);
  }

  // Both servers stay up; each scenario is measured in ROUNDS alternating with the baseline,
  // and the median of the per-round ratios is reported, so a noisy neighbour hits both alike.
  const baseline = await start(path.join(here, 'baseline-server.js'), [], { PORT: '0' });
  const baseUrl = `http://127.0.0.1:${baseline.port}`;
  const bare = { method: 'GET', path: '/bare' };
  await load(baseUrl, bare, 2); // warm-up

  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-'));
  tempDirs.push(dataDir);
  const key = generateKey('production');
  const platform = await start(
    path.join(here, 'platform-server.js'),
    [],
    {
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      REDIS_URL: '',
      LOG_LEVEL: 'warn',
      PORT: '0',
      PLATFORM_BOOTSTRAP_KEY: key,
      QUOTA_DAILY_PRODUCTION: '100000000',
      // The workflow scenarios start far more executions than a day's quota (issue 27) allows.
      WORKFLOW_DAILY_EXECUTIONS: '0',
      RATE_LIMIT_PER_IP: '0',
      RATE_LIMIT_PER_ENDPOINT: '0',
      // The add-to-cart scenario measures adding, not the hoarding cap (issue 19): its carts keep growing.
      CART_MAX_RESERVED_PER_VARIANT: '999',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
    },
    PLATFORM_NODE_FLAGS,
  );
  const url = `http://127.0.0.1:${platform.port}`;
  await waitHealthy(url);

  const rows = [];
  const baseRuns = [];
  for (const scenario of scenarios) {
    const request = await scenario.setup({ baseUrl: url, key });
    await load(url, request, 2); // warm-up
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await load(baseUrl, bare);
      const r = await load(url, request);
      baseRuns.push(b);
      runs.push({ ...r, ratio: r.rps / b.rps });
    }
    runs.sort((x, y) => x.ratio - y.ratio);
    // Resident memory right after the scenario: each service's goal is judged on its own load.
    rows.push([scenario.name, { ...runs[Math.floor(runs.length / 2)], rss: rssMb(platform.child.pid) }]);
  }
  const reportLines = [];
  for (const report of reports) reportLines.push(...(await report({ baseUrl: url, key })));
  // With no scenario selected (BENCH_ONLY naming only a report), the baseline row still gets a run.
  if (baseRuns.length === 0) baseRuns.push(await load(baseUrl, bare));
  baseRuns.sort((x, y) => x.rps - y.rps);
  const base = baseRuns[Math.floor(baseRuns.length / 2)];
  const rss = rssMb(platform.child.pid);
  const baseRss = rssMb(baseline.child.pid);
  // Stopped and waited for (SIGKILL after a grace period), so a profiled child writes its profile.
  await Promise.all([platform, baseline].map((server) => stop(server.child)));
  rmSync(dataDir, { recursive: true, force: true });
  rows.unshift(['bare Fastify route (baseline)', { ...base, ratio: 1, rss: baseRss }]);

  console.log(
    `\nbench: ${DURATION}s per run, ${ROUNDS} rounds alternating with the baseline (median ratio), ${CONNECTIONS} connections, Node ${process.version}\n`,
  );
  console.log(
    [
      'scenario'.padEnd(52),
      'req/s'.padStart(9),
      'p99 ms'.padStart(8),
      'ratio'.padStart(7),
      'non-2xx'.padStart(8),
      'RSS MB'.padStart(7),
    ].join(' '),
  );
  for (const [name, r] of rows) {
    console.log(
      [
        name.padEnd(52),
        fmt(r.rps).padStart(9),
        fmt(r.p99).padStart(8),
        fmt(r.ratio, 2).padStart(7),
        fmt(r.bad).padStart(8),
        (r.rss === undefined ? '' : fmt(r.rss, 0)).padStart(7),
      ].join(' '),
    );
  }
  console.log(`\nresident memory after the run: platform ${fmt(rss, 1)} MB, baseline ${fmt(baseRss, 1)} MB`);
  for (const line of reportLines) console.log(line);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
