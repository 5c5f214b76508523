/**
 * Issue 33: webhook → Postgres insert → answered by the last node (execution saved), beside the same
 * webhook → Set, so the database round trip's cost shows against the node's. The Postgres node writes
 * to a table of its own in the test PostgreSQL (TEST_DATABASE_URL); without it the scenario says so.
 * The report splits one execution's time, with the platform storing on SQLite and on PostgreSQL:
 * sequential calls of both flows beside the same INSERT sent by a bare `pg` client, so the node's own
 * cost is what the Postgres flow adds over Set beyond the round trip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, start, stop, waitHealthy } from '../children.js';
import { fmt, percentile, signed } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Sequential calls of each kind in the report (alternating), after a warm-up. */
const SEQUENTIAL = Number(process.env.BENCH_N8N_DB_CALLS ?? 300);

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `bench_n8n_pg_${process.pid}`;

const webhook = (path) => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion: 2,
  position: [0, 0],
  parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
});

async function api(baseUrl, key, method, url, body) {
  const res = await fetch(`${baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function activeFlow(baseUrl, key, path, second) {
  const { id } = await api(baseUrl, key, 'POST', '/api/v1/workflows', {
    name: `bench ${path}`,
    nodes: [webhook(path), { position: [200, 0], ...second }],
    connections: { Webhook: { main: [[{ node: second.name, type: 'main', index: 0 }]] } },
  });
  await api(baseUrl, key, 'POST', `/api/v1/workflows/${id}/activate`);
  return {
    method: 'POST',
    path: `/webhook/${path}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n: 1, name: 'ada' }),
  };
}

/** A fresh table (and earlier runs' dropped), and a `postgres` credential for it. */
async function prepare(baseUrl, key, table = TABLE) {
  const url = new URL(PG_URL);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const old = await admin.query("SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_n8n_pg_%'");
    for (const { tablename } of old.rows) {
      // Only this run's other tables are kept (the report makes one per store).
      if (!tablename.startsWith(TABLE)) await admin.query(`DROP TABLE IF EXISTS ${tablename}`);
    }
    await admin.query(
      `CREATE TABLE IF NOT EXISTS ${table} (id bigserial PRIMARY KEY, n int, name text, at timestamptz DEFAULT now())`,
    );
  } finally {
    await admin.end();
  }
  return api(baseUrl, key, 'POST', '/api/v1/credentials', {
    name: 'bench pg',
    type: 'postgres',
    data: {
      host: url.hostname,
      port: url.port || '5432',
      database: url.pathname.slice(1),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      maxConnections: '10',
    },
  });
}

const setNode = {
  name: 'Set',
  type: 'n8n-nodes-base.set',
  typeVersion: 3.4,
  parameters: {
    assignments: {
      assignments: [
        { id: 'a', name: 'n', value: '={{ $json.body.n }}', type: 'number' },
        { id: 'b', name: 'name', value: '={{ $json.body.name }}', type: 'string' },
      ],
    },
    options: {},
  },
};

const postgresNode = (credentialId, table = TABLE) => ({
  name: 'Postgres',
  type: 'n8n-nodes-base.postgres',
  typeVersion: 2.5,
  credentials: { postgres: { id: credentialId, name: 'bench pg' } },
  parameters: {
    operation: 'insert',
    schema: { __rl: true, mode: 'list', value: 'public' },
    table: { __rl: true, mode: 'list', value: table },
    columns: {
      mappingMode: 'defineBelow',
      value: { n: '={{ $json.body.n }}', name: '={{ $json.body.name }}' },
    },
    options: {},
  },
});

export default [
  {
    name: 'n8n-db: webhook → Set v3.4 (saved, SQLite)',
    setup: ({ baseUrl, key }) => activeFlow(baseUrl, key, 'bench-db-set', setNode),
  },
  {
    name: 'n8n-db: webhook → Postgres insert (saved, SQLite)',
    setup: async ({ baseUrl, key }) => {
      const cred = await prepare(baseUrl, key);
      return activeFlow(baseUrl, key, 'bench-db-pg', postgresNode(cred.id));
    },
  },
];

/** One call of a flow (or of the bare client), its time in ms; a failure fails the bench. */
async function timed(call) {
  const t0 = performance.now();
  await call();
  return performance.now() - t0;
}

async function webhookCall(base, request) {
  const res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${request.path}: ${res.status} ${text.slice(0, 200)}`);
}

async function throughput(base, request) {
  const r = await autocannon({
    url: base,
    connections: 32,
    duration: Number(process.env.BENCH_SECONDS ?? 5),
    requests: [{ method: request.method, path: request.path, headers: request.headers, body: request.body }],
  });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx };
}

const ms = (sorted, p) => fmt(percentile(sorted, p), 2);

/** The split for one store: sequential medians of Set, Postgres insert and the bare INSERT; exec/s. */
async function measureStore(label, extraEnv, table, bare) {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-bench-n8n-db-'));
  const key = generateKey('production');
  let child;
  try {
    const env = platformEnv(dir, key, {
      WORKFLOW_DAILY_EXECUTIONS: '0',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
      ...extraEnv,
    });
    const started = await start(path.join(here, '..', 'platform-server.js'), env, PLATFORM_NODE_FLAGS);
    child = started.child;
    const base = `http://127.0.0.1:${started.port}`;
    await waitHealthy(base);
    const cred = await prepare(base, key, table);
    const setRequest = await activeFlow(base, key, `bench-split-set`, setNode);
    const pgRequest = await activeFlow(base, key, `bench-split-pg`, postgresNode(cred.id, table));
    const insert = () => bare.query(`INSERT INTO ${table} (n, name) VALUES ($1, $2) RETURNING *`, [1, 'ada']);
    for (let i = 0; i < 30; i++) {
      await webhookCall(base, setRequest);
      await webhookCall(base, pgRequest);
      await insert();
    }
    const set = [];
    const pgFlow = [];
    const direct = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      set.push(await timed(() => webhookCall(base, setRequest)));
      pgFlow.push(await timed(() => webhookCall(base, pgRequest)));
      direct.push(await timed(insert));
    }
    for (const list of [set, pgFlow, direct]) list.sort((a, b) => a - b);
    const setLoad = await throughput(base, setRequest);
    const pgLoad = await throughput(base, pgRequest);
    const added = percentile(pgFlow, 0.5) - percentile(set, 0.5);
    const overhead = added - percentile(direct, 0.5);
    return [
      `  ${label}: sequential p50/p99 ms: Set ${ms(set, 0.5)}/${ms(set, 0.99)}, Postgres insert ${ms(pgFlow, 0.5)}/${ms(pgFlow, 0.99)}, bare pg INSERT ${ms(direct, 0.5)}/${ms(direct, 0.99)}`,
      `    the Postgres node adds ${fmt(added, 2)} ms p50 over Set: the round trip ${ms(direct, 0.5)} ms, the node's own ${signed(overhead)} ms`,
      `    32 connections: Set ${fmt(setLoad.rps)} exec/s (p99 ${setLoad.p99} ms), Postgres insert ${fmt(pgLoad.rps)} exec/s (p99 ${pgLoad.p99} ms), ratio ${fmt(pgLoad.rps / setLoad.rps, 2)}${setLoad.non2xx + pgLoad.non2xx > 0 ? `, non-2xx ${setLoad.non2xx + pgLoad.non2xx}` : ''}`,
    ];
  } finally {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The time split of webhook → Postgres insert, with the platform's executions saved on SQLite and on
 * PostgreSQL (a database of its own made here and dropped after).
 */
export async function report() {
  const storeDb = `bench_n8n_store_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const bare = new pg.Pool({ connectionString: PG_URL, max: 10 });
  const storeUrl = new URL(PG_URL);
  storeUrl.pathname = `/${storeDb}`;
  const lines = ['', `n8n-db: webhook → Postgres insert vs → Set, ${SEQUENTIAL} sequential calls each`];
  try {
    await admin.query(`CREATE DATABASE ${storeDb}`);
    lines.push(...(await measureStore('SQLite store', {}, `${TABLE}_sqlite`, bare)));
    lines.push(
      ...(await measureStore(
        'PostgreSQL store',
        { DATABASE_URL: storeUrl.toString() },
        `${TABLE}_postgres`,
        bare,
      )),
    );
    return lines;
  } finally {
    await bare.end();
    await admin.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`).catch(() => undefined);
    for (const t of [`${TABLE}_sqlite`, `${TABLE}_postgres`])
      await admin.query(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
    await admin.end();
  }
}
