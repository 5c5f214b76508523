import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { AppContext } from '../context.js';
import type { DatabaseHandle } from '../db/database.js';
import { ErrorBody } from '../http/schemas.js';
import { jobs } from '../queue/jobs.js';
import { registerBullCollector } from './bullmq.js';
import { type PoolLike, registerDatabaseCollectors, registerPoolCollector } from './collectors.js';
import { instrumentHttp } from './http.js';
import { registerJobMetrics } from './jobs.js';
import { registerRedisMetrics } from './redis.js';

/**
 * The PostgreSQL pool behind a database handle, when the handle exposes it as `pool` (SQLite has
 * one connection and no pool). Read structurally: the handle's interface does not promise it.
 */
function poolOf(database: DatabaseHandle): PoolLike | undefined {
  const pool = (database as DatabaseHandle & { pool?: PoolLike }).pool;
  return pool && typeof pool.totalCount === 'number' ? pool : undefined;
}

/** The registry of one platform: each app (tests build many per process) has its own. */
export async function createMetricsRegistry(ctx: AppContext): Promise<Registry> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const workflows = ctx.apis.workflows !== undefined;
  const documents = ctx.apis.documents !== undefined;
  registerDatabaseCollectors(registry, { db: ctx.db, clock: ctx.clock, log: ctx.log, workflows, documents });
  if (ctx.database.dialect === 'postgres') registerPoolCollector(registry, () => poolOf(ctx.database));
  const onJob = registerJobMetrics(registry);
  if (ctx.jobEvents) ctx.onClose(ctx.jobEvents.subscribe(onJob));
  // The queues of the enabled modules, by their names in the job catalogue.
  const queues = [
    ...(workflows ? [jobs.workflowExecution.name] : []),
    ...(documents ? [jobs.documentProcessing.name] : []),
  ];
  if (ctx.redis) {
    const { redisHealthOf } = await import('../queue/redis-health.js');
    registerRedisMetrics(registry, redisHealthOf(ctx.redis, ctx.config.REDIS_COMMAND_TIMEOUT_MS));
  }
  if (ctx.redis && queues.length > 0) {
    const close = await registerBullCollector(registry, {
      redis: ctx.redis,
      prefix: ctx.config.QUEUE_PREFIX,
      queues,
      log: ctx.log,
    });
    ctx.onClose(close);
  }
  return registry;
}

/**
 * A listener of its own for the scraper, with no key: only reachable where METRICS_HOST binds
 * it (loopback by default, or a private interface). Anything but `GET /metrics` is a 404.
 */
function metricsServer(registry: Registry): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
    );
  });
}

/**
 * Opens the metrics listener on METRICS_HOST:METRICS_PORT. Metrics are not worth refusing the
 * process for: a port that cannot be bound is one clear error line, and the process runs on.
 */
async function listenMetrics(server: Server, ctx: AppContext, hint: string): Promise<void> {
  const { METRICS_PORT: port, METRICS_HOST: host } = ctx.config;
  await new Promise<void>((resolve) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'is in use' : `cannot be bound (${err.code ?? err.message})`;
      ctx.log.error(`Metrics listener ${host}:${port} ${why}: /metrics is not served. ${hint}.`);
      resolve();
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      ctx.log.info(`Metrics at http://${host}:${port}/metrics`);
      resolve();
    });
  });
}

async function closeMetrics(server: Server): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Metrics of a `platform worker` (no HTTP API of its own): process, job, queue and database series
 * on the METRICS_PORT listener, which opens now. A worker has no main port to serve them on, so
 * with METRICS_PORT 0 it says so in one line and serves none.
 */
export async function serveWorkerMetrics(ctx: AppContext): Promise<void> {
  if (ctx.config.METRICS_PORT === 0) {
    ctx.log.warn('Metrics need METRICS_PORT in a worker (it has no main port): /metrics is not served.');
    return;
  }
  const server = metricsServer(await createMetricsRegistry(ctx));
  ctx.onClose(() => closeMetrics(server));
  await listenMetrics(server, ctx, 'Set METRICS_PORT to a free port');
}

/**
 * Prometheus metrics (docs/operations.md). Counts every request of `app`; serves `GET /metrics` on
 * the main port for keys with `core:admin`, or, when METRICS_PORT is set, on METRICS_HOST:METRICS_PORT
 * only. The separate listener opens when the app listens: CLI commands that build the app to run
 * one command never take the port from the running server.
 */
export async function registerMetrics(app: FastifyInstance, ctx: AppContext): Promise<Registry> {
  const registry = await createMetricsRegistry(ctx);
  instrumentHttp(app, registry);
  if (ctx.config.METRICS_PORT === 0) {
    app.get(
      '/metrics',
      {
        config: { auth: { service: 'core', operation: 'admin' } },
        schema: {
          tags: ['Core: operations'],
          summary: 'Prometheus metrics (needs core:admin)',
          description:
            'Prometheus text exposition format 0.0.4. Served here only when METRICS_ENABLED is true ' +
            'and METRICS_PORT is 0; with a METRICS_PORT, on that listener instead, with no key.',
          response: {
            200: {
              description: 'The metrics',
              content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
            },
            '4xx': ErrorBody,
            '5xx': ErrorBody,
          },
        },
      },
      async (_request, reply) => {
        const text = await registry.metrics();
        return reply.type(registry.contentType).send(text);
      },
    );
    return registry;
  }
  const server = metricsServer(registry);
  // Opened with the API (a CLI command that builds the app never takes the port).
  app.addHook('onListen', async () => {
    await listenMetrics(
      server,
      ctx,
      'Set METRICS_PORT to a free port, or 0 to serve /metrics on the main port',
    );
  });
  app.addHook('onClose', async () => closeMetrics(server));
  return registry;
}
