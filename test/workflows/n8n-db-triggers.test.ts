import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, REDIS_URL, redisAvailable, testDialects, uniqueName } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createCredential, createWorkflow, n8nNode, settled, workflowPlatform } from './support.js';

// The watched servers are the test PostgreSQL (a schema of this file's own) and Redis (channels of
// this file's own); 127.0.0.1 is allowed by OUTBOUND_ALLOW_HOSTS in the test platform.
const schema = uniqueName('n8n_pgt');
const admin = new pg.Client({ connectionString: PG_URL });
const hasRedis = await redisAvailable();
const publisher = hasRedis ? new Redis(REDIS_URL, { lazyConnect: true }) : null;

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await publisher?.connect();
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  publisher?.disconnect();
});

type Run = { id: string };
type Detail = {
  status: string;
  data: {
    resultData: {
      runData: Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>>;
    };
  };
};

async function runsOf(p: TestPlatform, workflowId: string): Promise<Run[]> {
  const res = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${workflowId}&limit=50` });
  return (res.json() as { data: Run[] }).data;
}

/** The trigger's output in the n-th execution (oldest first) once there are `count`. */
async function outputs(p: TestPlatform, workflowId: string, count: number, node: string) {
  const runs = await until(async () => {
    const r = await runsOf(p, workflowId);
    return r.length >= count ? r : undefined;
  }, `${count} executions`);
  const out: Array<Record<string, unknown>> = [];
  for (const run of runs.reverse()) {
    const d = (await settled(p, run.id)) as unknown as Detail;
    expect(d.status).toBe('success');
    out.push(d.data.resultData.runData[node]?.[0]?.data.main[0]?.[0]?.json ?? {});
  }
  return out;
}

/** Until the trigger's session has run LISTEN on the channel (activation starts it in the background). */
const listening = (channel: string) =>
  until(async () => {
    const r = await admin.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'n8n-trigger' AND query = $1",
      [`LISTEN "${channel}"`],
    );
    return r.rowCount === 1;
  }, `LISTEN ${channel}`);

describe.each(await testDialects())('Postgres and Redis triggers, platform on %s', (dialect) => {
  let p: TestPlatform;
  let pgCred = '';
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { TRIGGER_LISTENER_SYNC_SECONDS: '1' });
    pgCred = await createCredential(p, 'pg', 'postgres', {
      host: '127.0.0.1',
      port: '5432',
      database: 'test',
      user: 'postgres',
      password: '',
    });
  });
  afterAll(() => p?.close());

  const workflow = (trigger: ReturnType<typeof n8nNode>) => ({
    name: `${trigger.name} ${dialect}`,
    nodes: [trigger, n8nNode('No Operation', 'noOp', 1, {})],
    connections: { [trigger.name]: { main: [[{ node: 'No Operation', type: 'main', index: 0 }]] } },
    settings: {},
  });

  it('creates a trigger rule on a table: each insert starts an execution with the row; deactivation drops it', async () => {
    const table = uniqueName('orders');
    await admin.query(`CREATE TABLE ${schema}.${table} (id int PRIMARY KEY, item text)`);
    const nodeId = uniqueName('pgt');
    const id = await createWorkflow(
      p,
      workflow(
        n8nNode(
          'Postgres Trigger',
          'postgresTrigger',
          1,
          {
            schema: { __rl: true, mode: 'list', value: schema },
            tableName: { __rl: true, mode: 'list', value: table },
            additionalFields: {},
          },
          { id: nodeId, credentials: { postgres: { id: pgCred, name: 'pg' } } },
        ),
      ),
    );
    await activate(p, id);
    await listening(`n8n_channel_${nodeId}`);
    await admin.query(`INSERT INTO ${schema}.${table} VALUES (1, 'tea'), (2, 'cake')`);
    const out = await outputs(p, id, 2, 'Postgres Trigger');
    expect(out.map((o) => o.payload)).toEqual([
      { id: 1, item: 'tea' },
      { id: 2, item: 'cake' },
    ]);
    expect(out[0]).toMatchObject({ channel: `n8n_channel_${nodeId}`, name: 'notification' });

    const off = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
    expect(off.statusCode).toBe(200);
    await until(async () => {
      const r = await admin.query('SELECT 1 FROM pg_proc WHERE proname = $1', [
        `n8n_trigger_function_${nodeId}`,
      ]);
      return r.rowCount === 0;
    }, 'the trigger function dropped');
    await admin.query(`INSERT INTO ${schema}.${table} VALUES (3, 'jam')`);
    expect(await runsOf(p, id)).toHaveLength(2);
  });

  it('listens on a channel (text and JSON payloads); refuses a bad channel name at save', async () => {
    const channel = uniqueName('n8n_chan');
    const id = await createWorkflow(
      p,
      workflow(
        n8nNode(
          'Postgres Trigger',
          'postgresTrigger',
          1,
          { triggerMode: 'listenTrigger', channelName: channel },
          { credentials: { postgres: { id: pgCred, name: 'pg' } } },
        ),
      ),
    );
    await activate(p, id);
    await listening(channel);
    await admin.query('SELECT pg_notify($1, $2)', [channel, '{"order":7}']);
    await admin.query('SELECT pg_notify($1, $2)', [channel, 'plain text']);
    const out = await outputs(p, id, 2, 'Postgres Trigger');
    expect(out.map((o) => o.payload)).toEqual([{ order: 7 }, 'plain text']);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });

    const bad = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: workflow(
        n8nNode('Postgres Trigger', 'postgresTrigger', 1, {
          triggerMode: 'listenTrigger',
          channelName: 'a"; DROP TABLE x; --',
        }),
      ),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('channel name');
  });

  it.skipIf(!hasRedis)('Redis Trigger: one execution per message on the subscribed channels', async () => {
    const prefix = uniqueName('n8n_redis');
    const cred = await createCredential(p, 'redis', 'redis', { host: '127.0.0.1', port: '6379' });
    const id = await createWorkflow(
      p,
      workflow(
        n8nNode(
          'Redis Trigger',
          'redisTrigger',
          1,
          { channels: `${prefix}:orders, ${prefix}:jobs.*`, options: { jsonParseBody: true } },
          { credentials: { redis: { id: cred, name: 'redis' } } },
        ),
      ),
    );
    await activate(p, id);
    const client = publisher as Redis;
    // PUBLISH answers how many subscribers got it: 0 until the trigger has subscribed.
    await until(async () => (await client.publish(`${prefix}:orders`, '{"n":1}')) === 1, 'the subscription');
    await client.publish(`${prefix}:jobs.night`, 'not json');
    await client.publish(`${prefix}:other`, 'ignored');
    const out = await outputs(p, id, 2, 'Redis Trigger');
    expect(out).toEqual([
      { channel: `${prefix}:orders`, message: { n: 1 } },
      { channel: `${prefix}:jobs.night`, message: 'not json' },
    ]);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
    // The listener stops after the answer: wait until its connection is gone, then publish.
    await until(
      async () => !String(await client.call('CLIENT', 'LIST')).includes(`name=n8n-trigger:${id} `),
      'the subscriber closed',
    );
    expect(await client.publish(`${prefix}:orders`, 'late')).toBe(0);
    expect(await runsOf(p, id)).toHaveLength(2);
  });
});
