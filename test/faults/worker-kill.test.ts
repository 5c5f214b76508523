import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { PG_URL, postgresAvailable, uniqueName } from '../helpers/services.js';
import { stop } from '../scale/support.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  startProcess,
  startServer,
  tempDir,
} from '../workflows/process/processes.js';
import { flow } from '../workflows/support.js';
import { type PrivateRedis, redisServerAvailable, startPrivateRedis } from './redis-server.js';

/**
 * The worker running a `lastNode` webhook's execution is SIGKILLed while the caller waits: the
 * caller gets 502 (not 422, not a wait until the response timeout) once another worker's stalled-job
 * check sees the job, the execution is recorded crashed, and a retry with the same Idempotency-Key
 * runs anew.
 */

const STALL_SECONDS = 2;
/** Stall check and lock expiry are both STALL_SECONDS: the answer comes within a few of them. */
const ANSWER_AFTER_KILL_MS = 15_000;

const runnable = (await redisServerAvailable()) && (await postgresAvailable());
let redis: PrivateRedis | undefined;
let downstream: Server | undefined;
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
  await redis?.close();
  downstream?.closeAllConnections();
  await new Promise<void>((r) => (downstream ? downstream.close(() => r()) : r()));
  for (const schema of schemas) await pgQuery(`drop schema if exists "${schema}" cascade`);
});

/** Answers after `?ms=`; counts the requests it holds. */
async function delayedServer() {
  const state = { inFlight: 0, calls: 0 };
  const server = createServer((req, res) => {
    const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
    state.calls++;
    state.inFlight++;
    res.on('error', () => undefined);
    req.socket.on('error', () => undefined);
    setTimeout(() => {
      state.inFlight--;
      if (!res.destroyed)
        res.setHeader('content-type', 'application/json').end(JSON.stringify({ waited: ms }));
    }, ms);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(!runnable)('a worker SIGKILLed while a caller waits on its lastNode execution', () => {
  it('answers the caller 502 soon, records the execution crashed, and lets a retry run', async () => {
    redis = await startPrivateRedis();
    const slow = await delayedServer();
    downstream = slow.server;
    const schema = uniqueName('fkill');
    schemas.push(schema);
    await pgQuery(`create schema "${schema}"`);
    const dbUrl = new URL(PG_URL);
    dbUrl.searchParams.set('options', `-c search_path=${schema}`);
    const key = generateKey('production');
    const dataDir = tempDir();
    const env = {
      ...baseEnv(dataDir),
      DATABASE_URL: dbUrl.toString(),
      DATA_DIR: path.join(dataDir, 'unused'),
      PLATFORM_BOOTSTRAP_KEY: key,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: uniqueName('qk'),
      QUEUE_STALL_SECONDS: String(STALL_SECONDS),
    };
    const server = await startServer(['serve', '--no-worker'], env);
    const api = apiClient(server.url, key);
    await createAndActivate(
      api,
      flow('killed worker', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: {
            path: 'kill-me',
            responseMode: 'lastNode',
            options: { dedupeKey: '={{ $json.headers["idempotency-key"] }}' },
          },
        },
        {
          name: 'Call',
          type: 'httpRequest',
          parameters: { method: 'GET', url: `${slow.url}/hold`, query: { ms: '={{ $json.body.ms }}' } },
        },
      ]),
    );
    const first = startProcess(['worker'], env);
    await first.waitFor(/workflow worker started/);
    const send = (ms: number) =>
      fetch(`${server.url}/webhook/kill-me`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'order-1' },
        body: JSON.stringify({ ms }),
        signal: AbortSignal.timeout(90_000),
      });

    const waiting = send(60_000);
    await eventually(async () => (slow.state.inFlight > 0 ? true : undefined), 20_000, 'the run to start');
    // A second worker whose stalled-job check finds the dead one's job.
    const second = startProcess(['worker'], env);
    await second.waitFor(/workflow worker started/);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;

    const res = await waiting;
    const answeredAfter = Date.now() - killedAt;
    const body = (await res.json()) as { code: string; details: { executionId: string; reason: string } };
    expect(res.status).toBe(502);
    expect(body).toMatchObject({ code: 'UPSTREAM_ERROR', details: { reason: 'worker-crashed' } });
    expect(answeredAfter).toBeLessThan(ANSWER_AFTER_KILL_MS);

    // Recorded, not lost: n8n's `crashed` filter finds it.
    const crashed = await api('GET', '/api/v1/executions?status=crashed');
    expect(crashed.json.data.map((e: { id: string }) => e.id)).toContain(body.details.executionId);

    // The caller retries with the same key: the crashed run's claim is free, so it runs again, once.
    const retry = await send(10);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ waited: 10 });
    const again = await send(10);
    expect(again.status).toBe(200);
    expect(slow.state.calls).toBe(2);
    const rows = await pgQuery(`select status from "${schema}".executions order by started_at`);
    expect(rows.map((r) => r.status)).toEqual(['error', 'success']);

    console.info(`worker SIGKILLed: the waiting caller got 502 after ${answeredAfter} ms`);
    expect(second.child.exitCode).toBeNull();
    expect(server.child.exitCode).toBeNull();
    expect(await stop(second)).toBe(0);
    expect(await stop(server)).toBe(0);
  }, 120_000);
});
