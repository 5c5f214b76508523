import { Type } from 'typebox';
import type { PlatformModule } from '../../core/context.js';
import { VERSION } from '../../version.js';

const HealthReport = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  timestamp: Type.String({ format: 'date-time' }),
  version: Type.String(),
  databaseStatus: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
});

/** `GET /health`: no authentication; 503 when the database does not answer. */
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
          response: { 200: HealthReport, 503: HealthReport },
        },
      },
      async (_request, reply) => {
        const up = await ctx.database.ping();
        reply.code(up ? 200 : 503);
        return {
          status: up ? 'ok' : 'degraded',
          timestamp: ctx.clock.now().toISOString(),
          version: VERSION,
          databaseStatus: up ? 'ok' : 'error',
        };
      },
    );
  },
};
