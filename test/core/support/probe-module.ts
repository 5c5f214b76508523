import type { PlatformModule } from '../../../src/core/context.js';

/**
 * Test-only routes: echo the calling principal on two services, fail unexpectedly, answer
 * slowly, and opt in to the per-endpoint limiter (keyed and public).
 */
export const probeModule: PlatformModule = {
  name: 'probe',
  services: [],
  migrations: {},
  routes(app) {
    const echo = async (request: { principal: unknown }) => {
      const p = request.principal as {
        kind: string;
        customerId: string | null;
        keyId: string | null;
        accountId: string;
        scopes: readonly string[];
      } | null;
      return {
        kind: p?.kind,
        customerId: p?.customerId,
        keyId: p?.keyId,
        accountId: p?.accountId,
        scopes: p?.scopes,
      };
    };
    // Customer-facing, as the blends and cart routes are: customer tokens are accepted here.
    const customer = (service: 'commerce' | 'game' | 'llm') => ({
      config: { auth: { service, customerFacing: true } },
    });
    app.get('/probe/commerce', customer('commerce'), echo);
    app.post('/probe/commerce', customer('commerce'), echo);
    app.get('/probe/game', customer('game'), echo);
    app.get('/probe/llm', customer('llm'), echo);
    app.get('/probe/boom', { config: { auth: { service: 'commerce' } } }, async () => {
      throw new Error('connection string postgres://admin:hunter2@db/internal failed at /srv/x.ts:7');
    });
    app.get('/probe/public-boom', { config: { public: true } }, async () => {
      const err = new Error('secret stack detail') as Error & { statusCode?: number };
      err.statusCode = 502;
      throw err;
    });
    app.get<{ Querystring: { ms?: string } }>(
      '/probe/slow',
      { config: { public: true } },
      async (request) => {
        await new Promise((r) => setTimeout(r, Number(request.query.ms ?? 300)));
        return { slow: true };
      },
    );
    app.get('/probe/limited', { config: { auth: { service: 'core', endpointLimit: true } } }, async () => ({
      ok: true,
    }));
    app.post('/probe/public-limited', { config: { public: true, limited: true } }, async () => ({
      ok: true,
    }));
  },
};
