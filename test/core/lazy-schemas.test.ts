import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Platform } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';

/**
 * Route schemas compile on their route's first request (src/core/http/lazy-compile.ts), no longer before
 * the server listens: this finds a schema that does not compile, which a start used to, and checks that
 * the lazily compiled validators and serializers behave as the eager ones did.
 */
describe('route schemas compiled on first use', () => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await buildApp({
      config: parseConfig({ DATA_DIR: ':memory:', LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '' }),
      logger: false,
    });
    await platform.app.ready();
  }, 120_000);
  afterAll(async () => {
    await platform?.app.close();
  });

  it('answers the first requests of routes compiled on the spot', async () => {
    const first = await platform.app.inject({ method: 'POST', url: '/v1/api-keys', payload: { type: 5 } });
    expect(first.statusCode).toBe(401);
    const health = await platform.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    // Serialized by its response schema: only the schema's properties, in its order.
    expect(Object.keys(health.json() as object).length).toBeGreaterThan(0);
  });

  it('validates as before: strict bodies, coerced query strings, plain decimal numbers only', async () => {
    const { app } = platform;
    const key = (await platform.ctx.apis.auth?.bootstrap())?.createdKey;
    expect(key).toBeTruthy();
    const auth = { authorization: `Bearer ${key}` };
    const badBody = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: auth,
      payload: { type: 'staging', role: 5 },
    });
    expect(badBody.statusCode).toBe(400);
    expect((badBody.json() as { code: string }).code).toBe('VALIDATION_ERROR');
    const hex = await app.inject({ method: 'GET', url: '/v1/api-keys?limit=0x10', headers: auth });
    expect(hex.statusCode).toBe(400);
    const plain = await app.inject({ method: 'GET', url: '/v1/api-keys?limit=10', headers: auth });
    expect(plain.statusCode).toBe(200);
  });

  it('compiles every remaining schema without an error', () => {
    const compiled = platform.compileSchemas();
    // Hundreds of routes, most never called above; a second pass finds nothing left.
    expect(compiled).toBeGreaterThan(200);
    expect(platform.compileSchemas()).toBe(0);
  });
});
