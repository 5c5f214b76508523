import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, REDIS_URL, testDialects, uniqueName } from '../helpers/services.js';
import { createCredential, createWorkflow, workflowPlatform } from './support.js';

/**
 * Real n8n template exports with database nodes (test/fixtures/n8n/templates/, SOURCES-templates.md),
 * imported unmodified through the API — their credentials named as the exports name them — and run
 * manually against the real servers: a database of their own on PostgreSQL and MariaDB (the templates
 * create a table called `test`), a key of their own on Redis.
 */
const template = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/n8n/templates/${name}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;

interface Execution {
  status: string;
  data: {
    resultData: {
      error?: { message: string };
      runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>>;
    };
  };
}
const outputOf = (e: Execution, node: string) =>
  e.data.resultData.runData[node]?.[0]?.data.main[0]?.map((i) => i.json);

describe.each(await testDialects())('n8n database templates, platform on %s', (dialect) => {
  let p: TestPlatform;
  const pgDb = uniqueName('tpl_pg');
  const myDb = uniqueName('tpl_my');
  const pgAdmin = new pg.Client({ connectionString: PG_URL });
  let myAdmin: mysql.Connection;
  const redis = new Redis(REDIS_URL);

  beforeAll(async () => {
    await pgAdmin.connect();
    await pgAdmin.query(`CREATE DATABASE ${pgDb}`);
    myAdmin = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
    await myAdmin.query(`CREATE DATABASE ${myDb}`);
    p = await workflowPlatform(dialect);
    const pgUrl = new URL(PG_URL);
    await createCredential(p, 'postgres_docker_creds', 'postgres', {
      host: '127.0.0.1',
      port: pgUrl.port || '5432',
      database: pgDb,
      user: decodeURIComponent(pgUrl.username) || 'postgres',
      password: decodeURIComponent(pgUrl.password),
      ssl: 'disable',
    });
    await createCredential(p, 'mysql_creds', 'mySql', {
      host: '127.0.0.1',
      port: '3306',
      database: myDb,
      user: 'root',
      password: '',
    });
    await createCredential(p, 'redis-docker_creds', 'redis', {
      host: '127.0.0.1',
      port: '6379',
      database: '0',
    });
  });
  afterAll(async () => {
    await p?.close();
    await pgAdmin.query(`DROP DATABASE IF EXISTS ${pgDb} WITH (FORCE)`);
    await pgAdmin.end();
    await myAdmin.query(`DROP DATABASE IF EXISTS ${myDb}`);
    await myAdmin.end();
    await redis.quit();
  });

  async function runTemplate(name: string): Promise<Execution> {
    // These exports are n8n's copy format (nodes and connections only); the API needs a name, as n8n's.
    const id = await createWorkflow(p, { name, ...template(name) });
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Execution;
  }

  it('Postgres v1: creates the table, then inserts the Set node’s row', async () => {
    const run = await runTemplate('postgres-v1-create-insert.json');
    expect(run.data.resultData.error ?? null).toBeNull();
    expect(run.status).toBe('success');
    const db = new pg.Client({ connectionString: PG_URL.replace(/\/[^/]*$/, `/${pgDb}`) });
    await db.connect();
    try {
      expect((await db.query('SELECT id, name FROM test')).rows).toEqual([{ id: 0, name: 'n8n' }]);
    } finally {
      await db.end();
    }
  });

  it('MySQL v1: creates the table, then inserts the Set node’s row', async () => {
    const run = await runTemplate('mysql-v1-create-insert.json');
    expect(run.data.resultData.error ?? null).toBeNull();
    expect(run.status).toBe('success');
    const [rows] = await myAdmin.query(`SELECT id, name FROM ${myDb}.test`);
    expect(rows).toEqual([{ id: 0, name: 'n8n' }]);
  });

  it('Redis v1: gets the key the template names', async () => {
    await redis.set('hello', 'world');
    const run = await runTemplate('redis-v1-get.json');
    expect(run.status).toBe('success');
    // n8n's Redis get writes to `propertyName` (its default), as the template leaves it.
    expect(outputOf(run, 'Redis')).toEqual([{ propertyName: 'world' }]);
  });
});
