import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { testRedis } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable, uniqueName } from '../helpers/services.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  type PlatformProcess,
  slowServer,
  startProcess,
  tempDir,
} from '../workflows/process/processes.js';
import { type PrivatePostgres, startPrivatePostgres } from './private-postgres.js';
import { type Answer, acceptedFlow, tally, webhookLoad } from './webhook-load.js';

/** Every caller is answered within this (DATABASE_WAIT_MS 5 s by default, plus a loaded machine). */
const ANSWER_BOUND_MS = 12_000;
/** No execution stays new/running longer than this after the database is back. */
const SETTLE_BOUND_MS = 60_000;
const START_TIMEOUT_MS = 60_000;

// Under CI=true a missing Redis throws: the scale-out case fails, it does not skip.
const hasRedis = await redisAvailable();

/** SIGTERM, SIGKILL after the grace period. */
async function stop(proc: PlatformProcess, graceMs = 5_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/** What the run must show, whatever the topology. */
function expectRideThrough(procs: PlatformProcess[], answers: Answer[]): void {
  for (const proc of procs) {
    expect(proc.child.exitCode, proc.output().slice(-2000)).toBeNull();
    expect(proc.child.signalCode).toBeNull();
    expect(proc.output()).not.toContain('shutting down after error');
  }
  const unanswered = answers.filter((a) => a.status === 0);
  expect(unanswered, 'callers without an answer').toEqual([]);
  const slow = answers.filter((a) => a.ms > ANSWER_BOUND_MS);
  expect(slow, 'answers over the bound').toEqual([]);
  const wrong = answers.filter(
    (a) =>
      !(a.status >= 200 && a.status < 300) &&
      !(a.status === 503 && a.retryAfter !== null && a.code === 'SERVICE_UNAVAILABLE'),
  );
  expect(wrong, 'answers neither 2xx nor 503 with Retry-After').toEqual([]);
}

describe('PostgreSQL restarts under webhook load', () => {
  let server: PrivatePostgres;
  let admin: pg.Pool;
  let downstream: Awaited<ReturnType<typeof slowServer>>;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    admin = new pg.Pool({ connectionString: server.url, max: 1 });
    // The restarts end its idle connection too: an unheard 'error' event would fail the run.
    admin.on('error', () => undefined);
    downstream = await slowServer(300);
  }, 90_000);
  afterAll(async () => {
    await admin?.end();
    await downstream?.close();
    await cleanup();
    await server?.close();
  }, 60_000);

  /** A database of its own on the private server, and a pool onto it for the assertions. */
  async function freshDatabase() {
    const name = uniqueName('fault');
    await admin.query(`create database ${name}`);
    const url = server.url.replace(/\/postgres$/, `/${name}`);
    const rows = new pg.Pool({ connectionString: url, max: 2 });
    rows.on('error', () => undefined);
    return { url, rows };
  }

  /** The `n` of each stored execution of the workflow, and how many are not finished. */
  async function stored(rows: pg.Pool, workflowId: string) {
    const { rows: found } = await rows.query<{
      status: string;
      trigger_data: string;
      error_message: string | null;
    }>('select status, trigger_data, error_message from executions where workflow_id = $1', [workflowId]);
    return {
      ns: found.map(
        (r) =>
          (JSON.parse(r.trigger_data) as { items: Array<{ json: { body: { n: number } } }> }).items[0]?.json
            .body.n,
      ) as number[],
      open: found.filter((r) => r.status === 'new' || r.status === 'running').length,
      statuses: found.map((r) => r.status),
      errors: [...new Set(found.map((r) => r.error_message).filter(Boolean))],
    };
  }

  /**
   * Load on, a fast restart, then an immediate stop held until callers see 503s, then a start; each
   * time the first accepted call after the server's return is timed.
   */
  async function faultRun(urls: string[], hookPath: string) {
    const load = webhookLoad(urls, hookPath, 6);
    const accepted = (after: number) => (answers: Answer[]) =>
      answers.some((a) => a.status === 200 && a.startedAt >= after);
    await load.until(
      (answers) => answers.filter((a) => a.status === 200).length >= 20,
      30_000,
      'a warm load',
    );

    await server.restartFast();
    const back1 = Date.now();
    const first1 = await load.until(accepted(back1), 30_000, 'a webhook accepted after the restart');

    await server.stopImmediate();
    const down = Date.now();
    await load.until(
      (answers) => answers.filter((a) => a.status === 503 && a.startedAt >= down).length >= 3,
      30_000,
      'callers told 503 while the server is down',
    );
    // A load balancer's probe takes the process out while the database is gone, and quickly.
    const probedAt = Date.now();
    const health = await fetch(`${urls[0]}/health`);
    expect(health.status).toBe(503);
    expect(health.headers.get('retry-after')).not.toBeNull();
    expect(await health.json()).toMatchObject({ status: 'degraded', databaseStatus: 'error' });
    expect(Date.now() - probedAt).toBeLessThan(3_000);
    await server.start();
    const back2 = Date.now();
    const first2 = await load.until(accepted(back2), 30_000, 'a webhook accepted after the start');
    // Some more load on the recovered server, then the callers stop.
    await load.until(
      (answers) => answers.filter((a) => a.status === 200 && a.startedAt >= first2).length >= 20,
      30_000,
      'load after recovery',
    );
    const answers = await load.stop();
    return { answers, back2, recoveryMs: [first1 - back1, first2 - back2] };
  }

  async function settleAndCount(rows: pg.Pool, workflowId: string, answers: Answer[], back: number) {
    const settled = await eventually(
      async () => {
        const now = await stored(rows, workflowId);
        return now.open === 0 ? now : undefined;
      },
      SETTLE_BOUND_MS,
      'every execution finished',
    );
    expect(Date.now() - back).toBeLessThan(SETTLE_BOUND_MS + 5_000);
    const counts = tally(answers, settled.ns);
    expect(counts.accepted).toBeGreaterThan(40);
    expect(counts.lost, 'accepted calls without an execution').toEqual([]);
    expect(counts.duplicated, 'calls with two executions').toEqual([]);
    expect(counts.unknown).toEqual([]);
    const byStatus: Record<string, number> = {};
    for (const s of settled.statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
    console.info(
      `[faults] executions by status: ${JSON.stringify(byStatus)} ${JSON.stringify(settled.errors)}`,
    );
    return { counts, statuses: settled.statuses };
  }

  function report(what: string, answers: Answer[], recoveryMs: number[]) {
    const refused = answers.filter((a) => a.status === 503);
    const slowest = Math.max(...answers.map((a) => a.ms));
    console.info(
      `[faults] ${what}: ${answers.length} calls, ${refused.length} × 503 (${[
        ...new Set(refused.map((a) => a.dependency)),
      ].join(
        ',',
      )}), slowest answer ${slowest} ms, first accepted after the server's return: ${recoveryMs.join(
        ' ms, ',
      )} ms`,
    );
  }

  it('one `serve` (in-process queue): no exit, 2xx or 503 + Retry-After in bound, lost 0, duplicated 0, nothing left running', async () => {
    const { url: databaseUrl, rows } = await freshDatabase();
    const key = generateKey('production');
    const dir = tempDir('platform-fault-');
    const proc = startProcess(['serve'], {
      ...baseEnv(dir),
      DATABASE_URL: databaseUrl,
      PLATFORM_BOOTSTRAP_KEY: key,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'info',
    });
    try {
      const found = await proc.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, START_TIMEOUT_MS);
      const base = found[1] as string;
      const workflowId = await createAndActivate(
        apiClient(base, key),
        acceptedFlow('fault-single', 'fault-single', downstream.url),
      );
      const { answers, back2, recoveryMs } = await faultRun([base], 'fault-single');
      report('serve', answers, recoveryMs);
      expectRideThrough([proc], answers);
      await settleAndCount(rows, workflowId, answers, back2);
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ databaseStatus: 'ok', queueStatus: 'none' });
    } finally {
      await stop(proc);
      await rows.end();
    }
  }, 300_000);

  it.runIf(hasRedis)(
    '`serve --no-worker` + `worker` on Redis: no exit, 2xx or 503 + Retry-After in bound, lost 0, duplicated 0, nothing left running',
    async () => {
      const { url: databaseUrl, rows } = await freshDatabase();
      const key = generateKey('production');
      const dir = tempDir('platform-fault-');
      const queuePrefix = uniqueName('qf');
      const redisPrefix = `${uniqueName('rf')}:`;
      const shared = {
        ...baseEnv(dir),
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        QUEUE_PREFIX: queuePrefix,
        REDIS_PREFIX: redisPrefix,
        PLATFORM_BOOTSTRAP_KEY: key,
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'info',
      };
      const procs: PlatformProcess[] = [];
      try {
        const api = startProcess(['serve', '--no-worker'], { ...shared, DATA_DIR: path.join(dir, 'api') });
        procs.push(api);
        const found = await api.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, START_TIMEOUT_MS);
        const base = found[1] as string;
        const worker = startProcess(['worker'], { ...shared, DATA_DIR: path.join(dir, 'worker') });
        procs.push(worker);
        await worker.waitFor(/workflow worker started/, START_TIMEOUT_MS);
        const workflowId = await createAndActivate(
          apiClient(base, key),
          acceptedFlow('fault-scale', 'fault-scale', downstream.url),
        );
        const { answers, back2, recoveryMs } = await faultRun([base], 'fault-scale');
        report('serve --no-worker + worker', answers, recoveryMs);
        expectRideThrough(procs, answers);
        await settleAndCount(rows, workflowId, answers, back2);
        const health = await fetch(`${base}/health`);
        expect(await health.json()).toMatchObject({ databaseStatus: 'ok', queueStatus: 'ok' });
      } finally {
        for (const proc of procs) await stop(proc);
        await rows.end();
        const redis = testRedis();
        try {
          for (const pattern of [`${queuePrefix}:*`, `${redisPrefix}*`]) {
            const keys = await redis.keys(pattern);
            if (keys.length > 0) await redis.del(...keys);
          }
        } finally {
          redis.disconnect();
        }
      }
    },
    300_000,
  );
});
