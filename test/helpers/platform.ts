import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import type { AppContext, PlatformModule } from '../../src/core/context.js';
import type { Dialect } from '../../src/core/db/types.js';
import { allMigrations, allModules } from '../../src/modules/index.js';
import { TestClock } from './clock.js';
import { freshSqlite, postgresSchema } from './databases.js';
import { REDIS_URL } from './services.js';

export interface TestPlatform {
  app: FastifyInstance;
  ctx: AppContext;
  dialect: Dialect;
  clock: TestClock;
  /** The owner's production Admin key for all services. */
  adminKey: string;
  accountId: string;
  /** Shorthand for app.inject with a key in `Authorization: Bearer`. */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  /** Creates a key through the API; returns its value and id. */
  createKey(body: Record<string, unknown>, key?: string): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export interface TestPlatformOptions {
  dialect: Dialect;
  /** Settings, as environment variables. */
  env?: Record<string, string>;
  modules?: readonly PlatformModule[];
  clock?: TestClock;
  /** Use Redis for counters (a fresh key prefix is not needed: counter keys hold unique ids). */
  redis?: boolean;
  /** Log through pino to stdout at LOG_LEVEL (suites that read the server's log); off by default. */
  logger?: boolean;
}

/**
 * A whole platform on a fresh database: SQLite in memory, or a PostgreSQL schema of its own (emptied
 * on close for this process's next platform, or dropped), so suites run in parallel without sharing state.
 */
export async function createTestPlatform(options: TestPlatformOptions): Promise<TestPlatform> {
  const config = parseConfig({
    DATA_DIR: ':memory:',
    LOG_LEVEL: 'silent',
    USAGE_FLUSH_SECONDS: '60',
    // Suites send many bad credentials from one address; limiter suites set their own values.
    AUTH_FAILURES_PER_IP: '100000',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_ENDPOINT: '1000000',
    ...(options.redis ? { REDIS_URL } : {}),
    ...options.env,
  });
  // A fresh database without running the migrations again (databases.ts says how).
  const migrations = allMigrations(options.modules ?? allModules);
  const pg = options.dialect === 'postgres' ? await postgresSchema(migrations, 5) : undefined;
  const database = pg ? pg.database : await freshSqlite(migrations);
  const clock = options.clock ?? new TestClock();
  const releaseDatabase = () => (pg ? pg.release() : database.close());
  let built: Awaited<ReturnType<typeof buildApp>>;
  try {
    built = await buildApp({
      config,
      database,
      logger: options.logger ?? false,
      clock,
      skipMigrations: true,
      ...(options.modules ? { modules: options.modules } : {}),
    });
    await built.app.ready();
  } catch (error) {
    await releaseDatabase();
    throw error;
  }
  const { app, ctx } = built;
  const auth = ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const boot = await auth.bootstrap();
  if (!boot.createdKey) throw new Error('bootstrap did not create a key');
  const adminKey = boot.createdKey;

  const request: TestPlatform['request'] = ({ key, headers, ...rest }) =>
    app.inject({
      ...rest,
      headers: { ...(key === null ? {} : { authorization: `Bearer ${key ?? adminKey}` }), ...headers },
    });

  return {
    app,
    ctx,
    dialect: options.dialect,
    clock,
    adminKey,
    accountId: boot.accountId,
    request,
    async createKey(body, key) {
      const res = await request({ method: 'POST', url: '/v1/api-keys', payload: body, key: key ?? adminKey });
      if (res.statusCode !== 201) throw new Error(`createKey failed: ${res.statusCode} ${res.body}`);
      const created = res.json() as { key: string; id: string };
      return { key: created.key, id: created.id };
    },
    async close() {
      await app.close();
      await releaseDatabase();
    },
  };
}

/** A raw Redis client for tests that inspect or clean Redis. */
export function testRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** Deletes every Redis key under the given prefixes (queues a test made under names of its own). */
export async function deleteRedisPrefixes(prefixes: readonly string[]): Promise<void> {
  if (prefixes.length === 0) return;
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
