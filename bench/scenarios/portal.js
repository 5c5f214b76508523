/**
 * Issue 38: every portal page renders in under 1 s with 10,000 executions and 100,000 request-log rows
 * in the database. The built platform (SQLite file) is seeded by copying one real execution and one
 * real request-log row (so every column is what the server writes), then Debian's Chromium opens each
 * page and times from the route change to its table's first row (or its empty text), median of ROUNDS.
 * The baseline is the same page on the same server before the seed: the ratio says what the rows cost.
 * Run alone: `BENCH_ONLY=portal node bench/run.js` (needs /usr/bin/chromium; skipped without it).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { newId } from '../../dist/core/ids.js';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { stop } from '../children.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EXECUTIONS = 10_000;
const LOG_ROWS = 100_000;
const PASSWORD = 'bench harbor kestrel 58';

export default [];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The pages and what shows they have rendered: a table's first body row, or the page's empty text. */
const PAGES = [
  ['executions', '#/executions', 'table tbody tr, main p:text("No executions")'],
  ['request log', '#/logs', 'table tbody tr'],
  ['model calls', '#/logs/models', 'table tbody tr, main p:text("No model calls match.")'],
  ['audit trail', '#/logs/audit', 'table tbody tr'],
  ['usage', '#/usage', 'table.endpoints tbody tr'],
  ['workflows', '#/workflows', 'table tbody tr'],
  ['keys', '#/keys', 'table tbody tr'],
  ['knowledge', '#/knowledge', 'main h1:text("Knowledge")'],
];

function startPlatform(dir, key) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench', 'platform-server.js')], {
      env: {
        ...process.env,
        DATA_DIR: dir,
        LOG_LEVEL: 'warn',
        PLATFORM_BOOTSTRAP_KEY: key,
        REQUEST_LOG_RETENTION_DAYS: '30',
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`platform exited with ${code}`)));
    child.once('message', (msg) => resolve({ child, base: `http://127.0.0.1:${msg.port}` }));
  });
}

async function setPassword(dir) {
  const child = spawn(
    process.execPath,
    [path.join(root, 'dist', 'main.js'), 'users', 'set-password', 'owner@localhost'],
    {
      env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'ignore', 'inherit'],
    },
  );
  child.stdin.end(`${PASSWORD}\n`);
  const code = await new Promise((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`users set-password exited with ${code}`);
}

/** A workflow, one real execution of it, and request-log rows from real calls. */
async function seedRealRows(base, key) {
  const call = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const workflow = await call('POST', '/api/v1/workflows', {
    name: 'bench portal',
    nodes: [
      {
        id: 'a',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'b',
        name: 'Set',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: { assignments: [{ id: 'x', name: 'n', value: 1, type: 'number' }] },
          options: {},
        },
      },
    ],
    connections: { Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
    settings: {},
  });
  await call('POST', `/api/v1/workflows/${workflow.id}/run`, {});
  for (let i = 0; i < 5; i++) await call('GET', '/api/v1/workflows');
}

/** Copies the one execution and the newest request-log row until the tables hold the bench's counts. */
function cloneRows(dir) {
  const db = new Database(path.join(dir, 'platform.db'));
  db.pragma('busy_timeout = 10000');
  const execution = db.prepare('select * from executions limit 1').get();
  const logRow = db.prepare('select * from request_logs order by id desc limit 1').get();
  if (!execution || !logRow) throw new Error('nothing to copy: the seed calls left no rows');
  const insert = (table, row) => {
    const columns = Object.keys(row);
    return db.prepare(
      `insert into ${table} (${columns.join(',')}) values (${columns.map((c) => `@${c}`).join(',')})`,
    );
  };
  const addExecution = insert('executions', execution);
  const addLog = insert('request_logs', logRow);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < EXECUTIONS - 1; i++) {
      const at = new Date(now - (i + 1) * 60_000).toISOString();
      addExecution.run({ ...execution, id: newId('exe'), started_at: at, stopped_at: at });
    }
    for (let i = 0; i < LOG_ROWS; i++) {
      const at = new Date(now - (i + 1) * 5_000).toISOString();
      addLog.run({
        ...logRow,
        id: newId('rlog'),
        request_id: `bench-${i}`,
        status: i % 17 === 0 ? 404 : 200,
        created_at: at,
      });
    }
  })();
  const counts = {
    executions: db.prepare('select count(*) as n from executions').get().n,
    logs: db.prepare('select count(*) as n from request_logs').get().n,
  };
  db.close();
  return counts;
}

/** Milliseconds from the route change to the page's rendered state, median of ROUNDS. */
async function timePages(page) {
  const out = {};
  for (const [name, hash, ready] of PAGES) {
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) {
      // From another page, so each visit renders from nothing.
      await page.evaluate(() => {
        location.hash = '#/sessions';
      });
      await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
      const started = await page.evaluate(() => performance.now());
      await page.evaluate((h) => {
        location.hash = h;
      }, hash);
      await page.locator(ready).first().waitFor({ timeout: 30_000 });
      runs.push((await page.evaluate(() => performance.now())) - started);
    }
    out[name] = median(runs);
  }
  return out;
}

export async function report() {
  if (!existsSync('/usr/bin/chromium')) return ['portal: skipped (no /usr/bin/chromium)'];
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-portal-'));
  const key = generateKey('production');
  let platform;
  let server;
  try {
    platform = await startPlatform(dir, key);
    await setPassword(dir);
    await seedRealRows(platform.base, key);
    server = await chromium.launchServer({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    const browser = await chromium.connect(server.wsEndpoint());
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    await page.goto(`${platform.base}/portal/#/login`);
    await page.getByLabel('Email').fill('owner@localhost');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    const before = await timePages(page);
    const counts = cloneRows(dir);
    const after = await timePages(page);
    await browser.close();
    const lines = [
      `portal: page render, route change to first row (median of ${ROUNDS}), ${counts.executions.toLocaleString('en-US')} executions and ${counts.logs.toLocaleString('en-US')} request-log rows vs the same pages before the seed (goal < 1,000 ms each)`,
    ];
    for (const [name] of PAGES) {
      const a = after[name];
      const b = before[name];
      lines.push(
        `  ${name.padEnd(14)} ${a.toFixed(0).padStart(6)} ms seeded  ${b.toFixed(0).padStart(6)} ms empty  (${(a / b).toFixed(2)}x)${a < 1000 ? '' : '  over the goal'}`,
      );
    }
    return lines;
  } finally {
    const pid = server?.process().pid;
    await server?.close().catch(() => undefined);
    if (pid && server.process().exitCode === null) process.kill(pid, 'SIGKILL');
    if (platform) await stop(platform.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
