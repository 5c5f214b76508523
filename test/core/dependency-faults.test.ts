import { createServer } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { type DatabaseHandle, openDatabase } from '../../src/core/db/database.js';
import { DatabaseUnavailableError } from '../../src/core/db/faults.js';
import { toAppError } from '../../src/core/http/error-handler.js';
import { isPassingFault } from '../../src/core/process-faults.js';
import { PG_URL, postgresAvailable, uniqueName } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const pgUp = await postgresAvailable();
const admin = pgUp ? new pg.Pool({ connectionString: PG_URL, max: 2 }) : null;
afterAll(async () => {
  await admin?.end();
});

/** A port nothing listens on: taken from the OS, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function terminate(pid: number): Promise<void> {
  await admin?.query('select pg_terminate_backend($1)', [pid]);
}

/** Until the backend `pid` runs a query whose text contains `text` (its `state` is `active`). */
async function untilRunning(pid: number, text: string): Promise<void> {
  await until(
    async () =>
      ((
        await admin?.query(
          "select 1 from pg_stat_activity where pid = $1 and state = 'active' and query like $2",
          [pid, `%${text}%`],
        )
      )?.rowCount ?? 0) > 0,
    `backend ${pid} running ${text}`,
    20_000,
  );
}

/** Until the backend `pid` is gone (terminated). */
async function untilGone(pid: number): Promise<void> {
  await until(
    async () =>
      ((await admin?.query('select 1 from pg_stat_activity where pid = $1', [pid]))?.rowCount ?? 1) === 0,
    `backend ${pid} to end`,
    20_000,
  );
}

async function backendPid(database: DatabaseHandle): Promise<number> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db);
  return rows[0]?.pid as number;
}

describe('database faults map to 503 SERVICE_UNAVAILABLE with Retry-After', () => {
  it('an unreachable PostgreSQL fails within DATABASE_WAIT_MS as a DatabaseUnavailableError, and the answer is a 503 naming the database', async () => {
    const port = await closedPort();
    const database = await openDatabase({
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/test`,
      dataDir: ':memory:',
      waitMs: 400,
    });
    try {
      const started = Date.now();
      const error = await sql`select 1`.execute(database.db).then(
        () => null,
        (e: unknown) => e,
      );
      const took = Date.now() - started;
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(took).toBeGreaterThanOrEqual(350);
      expect(took).toBeLessThan(3_000);
      expect(database.available()).toBe(false);
      expect(await database.ping(500)).toBe(false);
      const answer = toAppError(error as Error, 3);
      expect(answer.status).toBe(503);
      expect(answer.code).toBe('SERVICE_UNAVAILABLE');
      expect(answer.details).toMatchObject({ dependency: 'database', reason: 'unreachable' });
      expect(answer.headers).toEqual({ 'retry-after': '3' });
      // Never a reason to end the process.
      expect(isPassingFault(error)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('SQLite and disk errors: SQLITE_FULL, SQLITE_BUSY, node:sqlite codes and ENOSPC are 503s; a constraint is not', () => {
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const nodeFull = Object.assign(new Error('database or disk is full'), {
      code: 'ERR_SQLITE_ERROR',
      errcode: 13,
    });
    const nospc = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    const unique = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(toAppError(full).details).toMatchObject({ dependency: 'database', reason: 'disk full' });
    expect(toAppError(busy).details).toMatchObject({ dependency: 'database', reason: 'busy' });
    expect(toAppError(nodeFull).details).toMatchObject({ dependency: 'database', reason: 'disk full' });
    expect(toAppError(nospc).details).toMatchObject({ dependency: 'disk', reason: 'disk full' });
    for (const e of [full, busy, nodeFull, nospc]) {
      expect(toAppError(e).status).toBe(503);
      expect(toAppError(e).headers['retry-after']).toBe('2');
    }
    expect(toAppError(unique).status).toBe(500);
    // An outbound call's refused connection is not the database's.
    expect(
      toAppError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).status,
    ).toBe(500);
  });

  it("ioredis's down and timed-out errors that no module mapped are 503s naming Redis, and pass the process", () => {
    const retries = Object.assign(new Error('Reached the max retries per request limit (which is 1).'), {
      name: 'MaxRetriesPerRequestError',
    });
    for (const error of [new Error('Command timed out'), new Error('Connection is closed.'), retries]) {
      const answer = toAppError(error, 4);
      expect(answer.status).toBe(503);
      expect(answer.details).toMatchObject({ dependency: 'redis', reason: 'unreachable' });
      expect(answer.headers['retry-after']).toBe('4');
      expect(isPassingFault(error)).toBe(true);
    }
    expect(
      toAppError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value')).status,
    ).toBe(500);
  });
});

describe.runIf(pgUp)('PostgreSQL connections lost under the platform', () => {
  async function open(poolSize: number, waitMs: number) {
    const schema = uniqueName('faults');
    const database = await openDatabase({
      databaseUrl: PG_URL,
      dataDir: ':memory:',
      pgSchema: schema,
      pgPoolSize: poolSize,
      waitMs,
    });
    return {
      database,
      close: async () => {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db);
        await database.close();
      },
    };
  }

  it('an idle connection terminated by the server (57P01) is replaced: the next query simply works', async () => {
    const { database, close } = await open(1, 2_000);
    try {
      const pid = await backendPid(database);
      await terminate(pid);
      const next = await backendPid(database);
      expect(next).not.toBe(pid);
    } finally {
      await close();
    }
  });

  it('a read whose connection is terminated while it runs is sent again on a fresh connection', async () => {
    const { database, close } = await open(2, 3_000);
    try {
      const pid = await backendPid(database);
      const slow = sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.5)`.execute(database.db);
      await untilRunning(pid, 'pg_sleep');
      await terminate(pid);
      const { rows } = await slow;
      expect(rows[0]?.pid).toBeTypeOf('number');
      expect(rows[0]?.pid).not.toBe(pid);
    } finally {
      await close();
    }
  });

  it('a transaction cut before its COMMIT runs again and commits once; a client error between its queries ends nothing', async () => {
    const { database, close } = await open(2, 3_000);
    try {
      await sql`create table t (id int primary key)`.execute(database.db);
      let attempts = 0;
      await database.db.transaction().execute(async (trx) => {
        attempts++;
        await sql`insert into t values (1)`.execute(trx);
        if (attempts === 1) {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          await terminate(rows[0]?.pid as number);
          // Idle in the transaction while the server ends it: pg emits `error` on the client.
          await untilGone(rows[0]?.pid as number);
          await sql`insert into t values (2)`.execute(trx);
        }
      });
      expect(attempts).toBe(2);
      const { rows } = await sql<{ id: number }>`select id from t order by id`.execute(database.db);
      expect(rows.map((r) => r.id)).toEqual([1]);
    } finally {
      await close();
    }
  });

  it('an exhausted pool answers 503 with Retry-After within DATABASE_WAIT_MS, not a 500; /health stays 200', async () => {
    const { database, close } = await open(1, 500);
    const { app, ctx } = await buildApp({
      config: parseConfig({
        DATA_DIR: ':memory:',
        LOG_LEVEL: 'silent',
        UNAVAILABLE_RETRY_AFTER_SECONDS: '4',
      }),
      database,
      logger: false,
    });
    try {
      const boot = await ctx.apis.auth?.bootstrap();
      const authorization = `Bearer ${boot?.createdKey}`;
      expect(
        (await app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization } })).statusCode,
      ).toBe(200);
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The one connection is busy for longer than a request waits.
      let holding = false;
      const holder = database.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        holding = true;
        await held;
      });
      await until(() => holding, 'the transaction to hold the connection', 20_000);
      const started = Date.now();
      const res = await app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization } });
      const took = Date.now() - started;
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('4');
      expect(res.json()).toMatchObject({
        error: true,
        code: 'SERVICE_UNAVAILABLE',
        details: { dependency: 'database', reason: 'no free connection' },
      });
      expect(took).toBeLessThan(5_000);
      // The server is there: a full pool does not take the process out of a load balancer.
      const health = await app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toMatchObject({ databaseStatus: 'ok', queueStatus: 'none' });
      release();
      await holder;
    } finally {
      await app.close();
      await close();
    }
  });
});
