/**
 * Issue 33: webhook → Postgres insert → answered by the last node (execution saved), beside the same
 * webhook → Set, so the database round trip's cost shows against the node's. The Postgres node writes
 * to a table of its own in the test PostgreSQL (TEST_DATABASE_URL); without it the scenario says so.
 */
import pg from 'pg';

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
async function prepare(baseUrl, key) {
  const url = new URL(PG_URL);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const old = await admin.query("SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_n8n_pg_%'");
    for (const { tablename } of old.rows) await admin.query(`DROP TABLE IF EXISTS ${tablename}`);
    await admin.query(
      `CREATE TABLE ${TABLE} (id bigserial PRIMARY KEY, n int, name text, at timestamptz DEFAULT now())`,
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

export default [
  {
    name: 'n8n-db: webhook → Set v3.4 (saved, SQLite)',
    setup: ({ baseUrl, key }) =>
      activeFlow(baseUrl, key, 'bench-db-set', {
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
      }),
  },
  {
    name: 'n8n-db: webhook → Postgres insert (saved, SQLite)',
    setup: async ({ baseUrl, key }) => {
      const cred = await prepare(baseUrl, key);
      return activeFlow(baseUrl, key, 'bench-db-pg', {
        name: 'Postgres',
        type: 'n8n-nodes-base.postgres',
        typeVersion: 2.5,
        credentials: { postgres: { id: cred.id, name: 'bench pg' } },
        parameters: {
          operation: 'insert',
          schema: { __rl: true, mode: 'list', value: 'public' },
          table: { __rl: true, mode: 'list', value: TABLE },
          columns: {
            mappingMode: 'defineBelow',
            value: { n: '={{ $json.body.n }}', name: '={{ $json.body.name }}' },
          },
          options: {},
        },
      });
    },
  },
];
