/**
 * Issue 27, item 3: fair sharing of execution capacity. Account B's webhook → NoOp (answered by its
 * last node) is measured on an idle server, then while account A keeps the most runaway executions it
 * is allowed running (`while (true) {}` Code nodes, each stopped by CODE_NODE_TIMEOUT_MS) with a
 * backlog of more queued behind them. Goal: B's p99 within 2× its idle value. B's load has as many
 * connections as an account may run executions at once. Run alone: `BENCH_ONLY=fairness node bench/run.js`.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, stop, waitHealthy } from '../children.js';
import { client, fmt, median, sleep } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The platform's defaults, stated so the figures say what they were measured with. */
const ACCOUNT_CONCURRENCY = Number(process.env.BENCH_FAIRNESS_CONCURRENCY ?? 4);
const CODE_TIMEOUT_MS = 5_000;

export default [];

const edge = (to) => ({ main: [[{ node: to, type: 'main', index: 0 }]] });
const webhook = (path, responseMode) => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion: 2,
  position: [0, 0],
  parameters: { httpMethod: 'POST', path, responseMode, options: {} },
});
const plain = {
  name: 'B plain',
  nodes: [
    webhook('fair-b', 'lastNode'),
    { name: 'Nothing', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0], parameters: {} },
  ],
  connections: { Webhook: edge('Nothing') },
};
const runaway = {
  name: 'A runaway',
  nodes: [
    webhook('fair-a', 'onReceived'),
    {
      name: 'Spin',
      type: 'n8n-nodes-base.code',
      typeVersion: 2,
      position: [200, 0],
      parameters: { jsCode: 'while (true) {}' },
    },
  ],
  connections: { Webhook: edge('Spin') },
};

function startServer(env) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, '..', 'fairness-server.js'), [], {
      execArgv: PLATFORM_NODE_FLAGS,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fairness-server exited with ${code}`)));
    child.once('message', (msg) => resolve({ child, port: msg.port, otherKey: msg.otherKey }));
  });
}

async function deploy(call, body) {
  const { id } = await call('POST', '/api/v1/workflows', body, [201]);
  await call('POST', `/api/v1/workflows/${id}/activate`, undefined, [200]);
}

async function p99Of(url) {
  const result = await autocannon({
    url,
    connections: ACCOUNT_CONCURRENCY,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        path: '/webhook/fair-b',
        headers: { 'content-type': 'application/json' },
        body: '{"n":1}',
      },
    ],
  });
  return {
    p99: result.latency.p99,
    rps: result.requests.average,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-fairness-'));
  const key = generateKey('production');
  const server = await startServer({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'error',
    PORT: '0',
    PLATFORM_BOOTSTRAP_KEY: key,
    RATE_LIMIT_PER_IP: '0',
    RATE_LIMIT_PER_ENDPOINT: '0',
    WORKFLOW_ACCOUNT_CONCURRENCY: String(ACCOUNT_CONCURRENCY),
    CODE_NODE_TIMEOUT_MS: String(CODE_TIMEOUT_MS),
    WORKFLOW_DAILY_EXECUTIONS: '0',
  });
  let keepBusy = false;
  try {
    const url = `http://127.0.0.1:${server.port}`;
    await waitHealthy(url);
    const a = client(url, key);
    const b = client(url, server.otherKey);
    await deploy(b, plain);
    await deploy(a, runaway);
    await p99Of(url); // warm-up
    const fire = () =>
      fetch(`${url}/webhook/fair-a`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
    const countOf = async (status) =>
      (await a('GET', `/api/v1/executions?status=${status}&limit=250`, undefined, [200])).data;
    // Rounds alternate (A saturating, then idle) so a noisy machine's drift hits both alike.
    const idle = [];
    const busy = [];
    let maxRunning = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // A: its cap running, and a backlog kept topped up behind it.
      for (let i = 0; i < ACCOUNT_CONCURRENCY * 3; i++) await fire();
      for (let i = 0; i < 200 && (await countOf('running')).length < ACCOUNT_CONCURRENCY; i++)
        await sleep(50);
      keepBusy = true;
      const topUp = (async () => {
        while (keepBusy) {
          for (let i = 0; i < ACCOUNT_CONCURRENCY; i++) await fire();
          await sleep(CODE_TIMEOUT_MS);
        }
      })();
      busy.push(await p99Of(url));
      maxRunning = Math.max(maxRunning, (await countOf('running')).length);
      keepBusy = false;
      await topUp;
      // A's backlog is stopped and its running runaways reach their time limit: the server is idle.
      for (const { id } of await countOf('new'))
        await a('POST', `/api/v1/executions/${id}/stop`, undefined, [200, 409]);
      for (let i = 0; i < 400 && (await countOf('running')).length > 0; i++) await sleep(50);
      await sleep(500);
      idle.push(await p99Of(url));
    }
    const idleP99 = median(idle.map((r) => r.p99));
    const busyP99 = median(busy.map((r) => r.p99));
    const bad = [...idle, ...busy].reduce((n, r) => n + r.bad, 0);
    return [
      '',
      `fairness (issue 27): account B's webhook → NoOp, ${ACCOUNT_CONCURRENCY} connections, ${SECONDS}s × ${ROUNDS} rounds (median p99)`,
      `  idle server:                                     p99 ${fmt(idleP99, 1)} ms, ${fmt(median(idle.map((r) => r.rps)))} req/s`,
      `  A running ${maxRunning} runaway Code nodes (its cap: ${ACCOUNT_CONCURRENCY}) + backlog: p99 ${fmt(busyP99, 1)} ms, ${fmt(median(busy.map((r) => r.rps)))} req/s`,
      `  ratio ${fmt(busyP99 / idleP99, 2)} (goal ≤ 2), non-2xx/errors ${bad}`,
    ];
  } finally {
    keepBusy = false;
    await stop(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
