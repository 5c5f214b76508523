import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Dialect } from '../../src/core/db/types.js';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

async function reachable(probe: () => Promise<void>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}

async function probePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
  await client.connect();
  await client.end();
}

async function probeRedis(): Promise<void> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000 });
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

let pgUp: Promise<boolean> | undefined;
let redisUp: Promise<boolean> | undefined;

/**
 * The databases a data-layer suite runs on: SQLite always, PostgreSQL when reachable.
 * Under CI=true a missing PostgreSQL is a failure, not a skip.
 */
/**
 * The dialects the data-layer suites run on: both, or SQLite alone where PostgreSQL is missing (a
 * failure under CI=true). TEST_DIALECTS=sqlite narrows a run on purpose (CI's Node 24 pass: the pg
 * driver is plain JavaScript, the same on every Node; SQLite's driver is what changes with Node).
 */
export async function testDialects(): Promise<Dialect[]> {
  if (process.env.TEST_DIALECTS === 'sqlite') return ['sqlite'];
  pgUp ??= reachable(probePostgres);
  if (await pgUp) return ['sqlite', 'postgres'];
  if (IN_CI) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is not reachable`);
  console.warn(`[skip] PostgreSQL not reachable at ${PG_URL}: running on SQLite only`);
  return ['sqlite'];
}

/**
 * Whether the PostgreSQL-only suites run (pool gauges, schema migrations, SQLite-vs-PostgreSQL
 * comparisons, scale-out): they need PostgreSQL whatever TEST_DIALECTS narrows, and under CI=true a
 * missing server is a failure.
 */
export async function postgresAvailable(): Promise<boolean> {
  pgUp ??= reachable(probePostgres);
  if (await pgUp) return true;
  if (IN_CI) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is not reachable`);
  console.warn(`[skip] PostgreSQL not reachable at ${PG_URL}: PostgreSQL suites skipped`);
  return false;
}

/** Whether Redis-backed suites run; under CI=true a missing Redis is a failure. */
export async function redisAvailable(): Promise<boolean> {
  redisUp ??= reachable(probeRedis);
  if (await redisUp) return true;
  if (IN_CI) throw new Error(`Redis is required under CI=true but ${REDIS_URL} is not reachable`);
  console.warn(`[skip] Redis not reachable at ${REDIS_URL}: Redis suites skipped`);
  return false;
}

export const uniqueName = (prefix: string): string => `${prefix}_${randomBytes(6).toString('hex')}`;

/**
 * The name prefix of the PostgreSQL schemas that test platforms keep for reuse (databases.ts): the
 * Vitest process's id (a worker's parent), whose global teardown drops them (global-setup.ts).
 */
export const pooledSchemaPrefix = (vitestPid: number = process.ppid): string => `tp_${vitestPid}`;
