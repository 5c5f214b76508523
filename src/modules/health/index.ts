import { Type } from 'typebox';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { VERSION } from '../../version.js';

const HealthReport = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  timestamp: Type.String({ format: 'date-time' }),
  version: Type.String(),
  databaseStatus: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
  /** The queue's Redis: `none` where executions run in-process (no REDIS_URL). */
  queueStatus: Type.Union([Type.Literal('ok'), Type.Literal('unavailable'), Type.Literal('none')]),
});

/** /health's own bound on the database's answer: a load balancer's probe must not hang. */
const PING_TIMEOUT_MS = 2_000;

function queueStatus(ctx: AppContext): 'ok' | 'unavailable' | 'none' {
  if (!ctx.redis) return 'none';
  return ctx.redis.status === 'ready' ? 'ok' : 'unavailable';
}

/**
 * `GET /health`: no authentication. 503 while the database does not answer (PostgreSQL unreachable
 * or restarting, SQLite's disk full), so a load balancer takes the process out until it does.
 */
export const healthModule: PlatformModule = {
  name: 'health',
  services: [],
  migrations: {},
  routes(app, ctx) {
    app.get(
      '/health',
      {
        config: { public: true },
        schema: {
          tags: ['Health'],
          summary: 'Health report',
          description:
            'databaseStatus `error` (and 503) while the database does not answer within 2 s; queueStatus ' +
            "reports the queue's Redis (`none` without one).",
          response: { 200: HealthReport, 503: HealthReport },
        },
      },
      async (_request, reply) => {
        const up = await ctx.database.ping(PING_TIMEOUT_MS);
        reply.code(up ? 200 : 503);
        if (!up) reply.header('retry-after', String(ctx.config.UNAVAILABLE_RETRY_AFTER_SECONDS));
        return {
          status: up ? 'ok' : 'degraded',
          timestamp: ctx.clock.now().toISOString(),
          version: VERSION,
          databaseStatus: up ? 'ok' : 'error',
          queueStatus: queueStatus(ctx),
        };
      },
    );
  },
};
