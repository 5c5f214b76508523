import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config, ServiceId } from '../config.js';
import type { Clock } from './clock.js';
import type { DatabaseHandle, Db } from './db/database.js';
import type { MigrationSet } from './db/migrate.js';
import type { StreamSlots } from './http/stream-slots.js';
import type { Limiter } from './limits/limiter.js';
import type { JobEvents } from './queue/job-events.js';
import type { Secrets } from './secrets.js';

/**
 * Public interfaces modules offer each other, filled in by declaration merging:
 *   declare module '../../core/context.js' { interface ModuleApis { blends: BlendsApi } }
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging
export interface ModuleApis {}

/** The resources every module shares, built once at boot. */
export interface AppContext {
  config: Config;
  database: DatabaseHandle;
  db: Db;
  clock: Clock;
  limiter: Limiter;
  redis: Redis | null;
  secrets: Secrets;
  services: ReadonlySet<ServiceId>;
  log: FastifyBaseLogger;
  apis: Partial<ModuleApis>;
  /** Slots for long-lived connections (WebSockets, streamed answers), per key and per process. */
  streams?: StreamSlots;
  /**
   * The jobs this process runs: queues report to `jobEvents.observe`, the metrics subscribe.
   * Optional until app.ts builds one and the modules hand it to createQueue.
   */
  jobEvents?: JobEvents;
  /** Runs on shutdown, in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
}

export function requireApi<K extends keyof ModuleApis>(ctx: AppContext, name: K): ModuleApis[K] {
  const api = ctx.apis[name];
  if (!api) throw new Error(`Module API '${String(name)}' is not registered; check module order`);
  return api as ModuleApis[K];
}

/** One service of the platform: its tables and its routes. */
export interface PlatformModule {
  name: string;
  /** The plugin is registered when one of these services is enabled (always, if empty). */
  services: readonly ServiceId[];
  migrations: MigrationSet;
  /** Sets up the module's public API on ctx.apis (runs for every module, enabled or not). */
  init?(ctx: AppContext): Promise<void> | void;
  /** Registers routes. */
  routes?(app: FastifyInstance, ctx: AppContext): Promise<void> | void;
}
