import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { redisAvailable } from '../helpers/services.js';

/** Test-only routes opting in to the per-endpoint limiter, keyed and public. */
const limitedRoutes: PlatformModule = {
  name: 'limited',
  services: [],
  migrations: {},
  routes(app) {
    app.get('/test/limited', { config: { auth: { service: 'core', endpointLimit: true } } }, async () => ({
      ok: true,
    }));
    app.post('/test/public-hook', { config: { public: true, limited: true } }, async () => ({ ok: true }));
  },
};

let open: TestPlatform[] = [];
afterEach(async () => {
  await Promise.all(open.map((p) => p.close()));
  open = [];
});

async function platform(env: Record<string, string>, redis = false): Promise<TestPlatform> {
  const p = await createTestPlatform({
    dialect: 'sqlite',
    env,
    redis,
    modules: [authModule, healthModule, limitedRoutes],
  });
  open.push(p);
  return p;
}

describe('short-window limiters', () => {
  it('per IP: the N+1th request from one address in the window is 429; another address is not', async () => {
    const p = await platform({ RATE_LIMIT_PER_IP: '3' });
    const from = (remoteAddress: string) => p.request({ method: 'GET', url: '/v1/usage', remoteAddress });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await from('192.0.2.10')).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    expect((await from('192.0.2.11')).statusCode).toBe(200);
  });

  it('per endpoint and caller, with headers, on keyed and public routes', async () => {
    const p = await platform({ RATE_LIMIT_PER_ENDPOINT: '2', RATE_LIMIT_WINDOW_SECONDS: '60' });
    const keyed = [];
    for (let i = 0; i < 3; i++) keyed.push(await p.request({ method: 'GET', url: '/test/limited' }));
    expect(keyed.map((r) => r.statusCode)).toEqual([200, 200, 429]);
    const refused = keyed[2]!;
    expect(refused.json().code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.headers['x-ratelimit-limit']).toBe('2');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another route of the same caller is not limited by it.
    expect((await p.request({ method: 'GET', url: '/v1/usage' })).statusCode).toBe(200);

    const hook = [];
    for (let i = 0; i < 3; i++)
      hook.push(await p.request({ method: 'POST', url: '/test/public-hook', key: null, payload: {} }));
    expect(hook.map((r) => r.statusCode)).toEqual([200, 200, 429]);
    expect(hook[0]!.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('failed authentications per IP: after N, that IP gets 429 even with a good key', async () => {
    const p = await platform({ AUTH_FAILURES_PER_IP: '3' });
    const call = (key: string, remoteAddress: string) =>
      p.request({ method: 'GET', url: '/v1/usage', key, remoteAddress });
    for (let i = 0; i < 3; i++) expect((await call('PROD_API_nope', '198.51.100.1')).statusCode).toBe(401);
    const blocked = await call(p.adminKey, '198.51.100.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().message).toMatch(/failed authentication/);
    expect((await call(p.adminKey, '198.51.100.2')).statusCode).toBe(200);
  });
});

const redisUp = await redisAvailable();

describe.skipIf(!redisUp)('revocation across processes over Redis', () => {
  it('a key revoked in one process is refused at once by another sharing Redis', async () => {
    // Two platforms, one shared database would need a file or PostgreSQL; the cache is what is
    // under test, so the second process gets the same key row through its own bootstrap value.
    const a = await platform({ KEY_CACHE_TTL_SECONDS: '3600' }, true);
    const shared = await a.createKey({
      name: 'shared',
      type: 'development',
      services: ['core'],
      role: 'Admin',
    });
    const b = await createTestPlatform({
      dialect: 'sqlite',
      redis: true,
      env: { KEY_CACHE_TTL_SECONDS: '3600' },
      modules: [authModule, healthModule, limitedRoutes],
    });
    open.push(b);
    // Copy the key row into b's database so b verifies (and caches) the same key id.
    const row = await a.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', shared.id)
      .executeTakeFirstOrThrow();
    await b.ctx.db
      .insertInto('api_keys')
      .values({ ...row, account_id: b.accountId })
      .execute();
    const viaB = () => b.request({ method: 'GET', url: '/v1/usage', key: shared.key });
    expect((await viaB()).statusCode).toBe(200);
    // Revoke in b's database directly (as another process would) and publish through a's API.
    await b.ctx.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('id', '=', shared.id)
      .execute();
    expect((await viaB()).statusCode).toBe(200); // still cached in b
    expect((await a.request({ method: 'DELETE', url: `/v1/api-keys/${shared.id}` })).statusCode).toBe(204);
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await viaB()).statusCode;
    }
    expect(status).toBe(401);
  });
});
