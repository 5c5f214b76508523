import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../../src/core/db/types.js';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import { testRedis } from '../../helpers/platform.js';
import { PG_URL, REDIS_URL, redisAvailable, testDialects, uniqueName } from '../../helpers/services.js';
import { activate, createWorkflow, echoFlow, settled, workflowPlatform } from '../support.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  sleep,
  startProcess,
  startServer,
  tempDir,
} from './processes.js';

const hasRedis = await redisAvailable();
const dialects = hasRedis ? await testDialects() : [];
const prefixes: string[] = [];
const schemas: string[] = [];

async function pgQuery(text: string): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  await cleanup();
  for (const schema of schemas) await pgQuery(`drop schema if exists "${schema}" cascade`);
  if (prefixes.length > 0) {
    const redis = testRedis();
    try {
      for (const prefix of prefixes) {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      redis.disconnect();
    }
  }
});

/** Where both processes keep their data: a PostgreSQL schema of its own, or a SQLite file. */
async function databaseEnv(dialect: Dialect, dataDir: string): Promise<Record<string, string>> {
  if (dialect === 'sqlite') return {};
  const schema = uniqueName('proc');
  schemas.push(schema);
  // The platform takes no schema setting: the connection's search_path picks it (libpq `options`).
  await pgQuery(`create schema "${schema}"`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { DATABASE_URL: url.toString(), DATA_DIR: path.join(dataDir, 'unused') };
}

type Exe = { status: string; mode: string };

// Processes share PostgreSQL in production; SQLite only where PostgreSQL is not reachable.
const processDialect: Dialect[] = dialects.includes('postgres') ? ['postgres'] : dialects;

describe.skipIf(!hasRedis).each(processDialect)('BullMQ across processes on %s', (dialect) => {
  it('serve --no-worker only queues; a separate worker runs the jobs and answers lastNode webhooks', async () => {
    const key = generateKey('production');
    const dataDir = tempDir();
    const prefix = uniqueName('qp');
    prefixes.push(prefix);
    const env = {
      ...baseEnv(dataDir),
      ...(await databaseEnv(dialect, dataDir)),
      PLATFORM_BOOTSTRAP_KEY: key,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
    };
    const server = await startServer(['serve', '--no-worker'], env);
    const api = apiClient(server.url, key);
    await createAndActivate(api, echoFlow('bull-echo'));
    await createAndActivate(api, echoFlow('bull-received', { responseMode: 'onReceived' }));

    const hook = (p: string, message: string) =>
      fetch(`${server.url}/webhook/${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      });
    const received: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await hook('bull-received', `r${i}`);
      expect(res.status).toBe(200);
      received.push(((await res.json()) as { executionId: string }).executionId);
    }
    // An answer that only a worker can produce, asked for before any worker exists.
    const early = hook('bull-echo', 'before the worker');
    await eventually(
      async () => {
        const queued = await api('GET', '/api/v1/executions?status=new&limit=50');
        return queued.json.data.length === 6 ? true : undefined;
      },
      30_000,
      'six queued executions',
    );
    // Nothing runs them: still queued, none taken. No event marks "the API process did not take a
    // job"; this short pause only gives a wrong consumer the time to show itself (on a slow machine it
    // can miss one, never fail a correct platform).
    await sleep(500);
    const all = await api('GET', '/api/v1/executions?limit=50');
    expect(all.json.data.map((e: Exe) => e.status)).toEqual(Array(6).fill('new'));

    const worker = startProcess(['worker'], env);
    await worker.waitFor(/workflow worker started/);
    const answered = await early;
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ echoed: 'before the worker', ok: true });

    for (const id of received) {
      const exe = await eventually(
        async () => {
          const res = await api('GET', `/api/v1/executions/${id}`);
          return ['new', 'running'].includes(res.json.status) ? undefined : (res.json as Exe);
        },
        30_000,
        `execution ${id}`,
      );
      expect(exe).toMatchObject({ status: 'success', mode: 'webhook' });
    }
    const res = await hook('bull-echo', 'with a worker');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ echoed: 'with a worker', ok: true });
    // The API process itself ran nothing: no worker in it, so no recovery either.
    expect(server.output()).not.toMatch(/workflow executions recovered/);

    if (dialect === 'postgres') {
      // Both processes wrote to the schema the URL named.
      const [row] = await pgQuery(`select count(*)::int as n from "${schemas.at(-1)}".executions`);
      expect(row?.n).toBe(7);
    }
    expect(await worker.kill('SIGTERM')).toBe(0);
    expect(await server.kill('SIGTERM')).toBe(0);
  }, 60_000);
});

describe.skipIf(!hasRedis).each(dialects)('BullMQ in one process on %s', (dialect) => {
  it('a lastNode webhook round-trips through the Redis queue', async () => {
    const prefix = uniqueName('qi');
    prefixes.push(prefix);
    const p = await workflowPlatform(dialect, { QUEUE_PREFIX: prefix }, { redis: true });
    try {
      await activate(p, await createWorkflow(p, echoFlow('bull-inproc')));
      const res = await p.app.inject({
        method: 'POST',
        url: '/webhook/bull-inproc',
        payload: { message: 'hi' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ echoed: 'hi', ok: true });
      const list = await p.request({ method: 'GET', url: '/api/v1/executions' });
      const [only] = (list.json() as { data: Array<{ id: string }> }).data;
      expect(await settled(p, only?.id as string)).toMatchObject({ status: 'success' });
      // The job went through BullMQ: its keys live under this platform's prefix.
      const redis = testRedis();
      try {
        expect(await redis.keys(`${prefix}:workflow-executions:*`)).not.toHaveLength(0);
      } finally {
        redis.disconnect();
      }
    } finally {
      await p.close();
    }
  });
});
