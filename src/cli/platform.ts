import type { FastifyBaseLogger } from 'fastify';
import { type Config, enabledServices, loadConfig } from '../config.js';
import { systemClock } from '../core/clock.js';
import type { AppContext, PlatformModule } from '../core/context.js';
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { memoryCounterStore } from '../core/limits/counter-store.js';
import { Limiter } from '../core/limits/limiter.js';
import { loadSecrets } from '../core/secrets.js';
import { platformMigrations } from './migrations.js';

/** A command prints what it has to say itself; its modules' log lines would only interleave. */
const silentLogger: FastifyBaseLogger = {
  level: 'silent',
  fatal: () => undefined,
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  trace: () => undefined,
  silent: () => undefined,
  child: () => silentLogger,
};

/**
 * The platform for a command: the server's database, migrated as the server does it, and the APIs of
 * only the `modules` the command uses (in dependency order), without Fastify or any route: loading
 * the rest would be most of the command's time. Never a worker: recovery here would mark the server's
 * running executions as crashed. Everything is closed when `use` settles. `settings`: the environment's
 * (and `.env`'s), as the server reads them, unless given.
 */
export async function withPlatform<T>(
  modules: readonly PlatformModule[],
  use: (ctx: AppContext) => Promise<T>,
  settings: Config = loadConfig(),
): Promise<T> {
  const config: Config = { ...settings, LOG_LEVEL: 'silent', WORKFLOW_WORKER: false };
  const services = enabledServices(config);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    waitMs: config.DATABASE_WAIT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  });
  const closers: Array<() => Promise<void> | void> = [async () => database.close()];
  const close = async () => {
    for (const fn of closers.reverse()) await fn();
  };
  try {
    await migrateToLatest(database.db, platformMigrations);
    // Shared with the server, so a revocation here reaches its key caches (the Redis pub/sub hop).
    const redis = config.REDIS_URL
      ? new (await import('ioredis')).Redis(
          config.REDIS_URL,
          (await import('../core/queue/redis-options.js')).redisOptions(config.REDIS_COMMAND_TIMEOUT_MS),
        )
      : null;
    redis?.on('error', () => undefined);
    if (redis)
      closers.push(async () => {
        await redis.quit().catch(() => undefined);
      });
    const ctx: AppContext = {
      config,
      database,
      db: database.db,
      clock: systemClock,
      // No request is served: the counters are never read, so they need not be shared.
      limiter: new Limiter(memoryCounterStore(), systemClock),
      redis,
      secrets: loadSecrets(config.ENCRYPTION_KEY, config.DATA_DIR),
      services,
      log: silentLogger,
      apis: {},
      onClose: (fn) => closers.push(fn),
    };
    for (const module of modules) await module.init?.(ctx);
    return await use(ctx);
  } finally {
    await close();
  }
}
