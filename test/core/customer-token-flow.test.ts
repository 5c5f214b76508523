import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

/** A test-only module whose route echoes who is calling. */
const whoami: PlatformModule = {
  name: 'whoami',
  services: [],
  migrations: {},
  routes(app) {
    // Customer-facing, as the blends and cart routes are: customer tokens are accepted here.
    const customer = { config: { auth: { service: 'commerce', customerFacing: true } } } as const;
    app.get('/test/commerce/whoami', customer, async (request) => ({
      kind: request.principal?.kind,
      customerId: request.principal?.customerId,
      keyId: request.principal?.keyId,
    }));
    app.post('/test/commerce/whoami', customer, async () => ({ ok: true }));
    app.get('/test/commerce/boom', { config: { auth: { service: 'commerce' } } }, async () => {
      throw new Error('secret internal detail at /srv/app.ts:42');
    });
  },
};

const dialects = await testDialects();

describe.each(dialects)('customer tokens and usage on %s', (dialect) => {
  let p: TestPlatform;
  let integration: { key: string; id: string };
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, modules: [authModule, healthModule, whoami] });
    integration = await p.createKey({
      name: 'shop',
      type: 'production',
      services: ['commerce'],
      role: 'Writer',
      dailyQuota: 1000,
    });
  });
  afterAll(async () => {
    await p.close();
  });

  const mint = (body: Record<string, unknown>, key = integration.key) =>
    p.request({ method: 'POST', url: '/v1/auth/tokens', key, payload: body });

  it('mints a token that acts for the customer and counts against the issuing key', async () => {
    const res = await mint({ customerId: 'cust_42', scopes: ['commerce:read'], ttlSeconds: 600 });
    expect(res.statusCode).toBe(201);
    const { token, expiresAt } = res.json();
    expect(token.split('.')).toHaveLength(3);
    expect(Date.parse(expiresAt) - p.clock.now().getTime()).toBeLessThanOrEqual(600_000);
    const me = await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({ kind: 'customer_token', customerId: 'cust_42', keyId: integration.id });
    expect(me.headers['x-ratelimit-limit']).toBe('1000');
    // Read-only token: writes are refused; other services too.
    const write = await p.request({ method: 'POST', url: '/test/commerce/whoami', key: token });
    expect(write.statusCode).toBe(403);
    expect(write.json().details.requiredScope).toBe('commerce:write');
    const core = await p.request({ method: 'GET', url: '/v1/usage', key: token });
    expect(core.statusCode).toBe(403);
  });

  it('refuses scopes broader than the key, tokens minting tokens, and too long a life', async () => {
    const broad = await mint({ customerId: 'c', scopes: ['commerce:delete'] });
    expect(broad.statusCode).toBe(403);
    expect(broad.json().details.scopes).toEqual(['commerce:delete']);
    const other = await mint({ customerId: 'c', scopes: ['game:read'] });
    expect(other.statusCode).toBe(403);
    const { token } = (await mint({ customerId: 'c', scopes: ['commerce:read'] })).json();
    expect((await mint({ customerId: 'd', scopes: ['commerce:read'] }, token)).statusCode).toBe(403);
    const long = await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: 10 * 86_400 });
    expect(long.statusCode).toBe(400);
    const bad = await mint({ customerId: 'bad id with spaces', scopes: [] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.fields.map((f: { field: string }) => f.field)).toEqual(
      expect.arrayContaining(['body.customerId', 'body.scopes']),
    );
  });

  it('401 for alg none, a bad signature, a wrong audience and an expired token', async () => {
    const claims = { scope: 'commerce:read', key: integration.id, acct: p.accountId };
    const unsigned = new UnsecuredJWT(claims)
      .setIssuer('api-platform')
      .setAudience('api-platform:customer')
      .setSubject('c')
      .setExpirationTime('1h')
      .encode();
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('api-platform')
      .setAudience('api-platform:customer')
      .setSubject('c')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    const rightKey = p.ctx.secrets.derive('jwt:customer-tokens');
    const wrongAudience = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('api-platform')
      .setAudience('someone-else')
      .setSubject('c')
      .setExpirationTime('1h')
      .sign(rightKey);
    for (const token of [unsigned, forged, wrongAudience]) {
      const res = await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    }
    const { token } = (await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: 60 })).json();
    expect((await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token })).statusCode).toBe(
      200,
    );
    p.clock.advance(61);
    const expired = await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().message).toMatch(/expired/);
  });

  it('revoking the issuing key kills its tokens', async () => {
    const issuer = await p.createKey({
      name: 'temp',
      type: 'development',
      services: ['commerce'],
      role: 'Reader',
    });
    const { token } = (await mint({ customerId: 'c', scopes: ['commerce:read'] }, issuer.key)).json();
    expect((await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token })).statusCode).toBe(
      200,
    );
    await p.request({ method: 'DELETE', url: `/v1/api-keys/${issuer.id}` });
    expect((await p.request({ method: 'GET', url: '/test/commerce/whoami', key: token })).statusCode).toBe(
      401,
    );
  });

  it('an unexpected failure is a 500 without internals', async () => {
    const res = await p.request({ method: 'GET', url: '/test/commerce/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      error: true,
      code: 'INTERNAL_ERROR',
      message: 'Internal server error',
      details: {},
      requestId: res.headers['x-request-id'],
    });
    expect(res.body).not.toContain('/srv/app.ts');
  });

  it('records usage per key, day and service, including rejections', async () => {
    const k = await p.createKey({
      name: 'usage',
      type: 'development',
      services: ['*'],
      role: 'Admin',
      dailyQuota: 3,
    });
    for (let i = 0; i < 5; i++) await p.request({ method: 'GET', url: '/test/commerce/whoami', key: k.key });
    const res = await p.request({ method: 'GET', url: `/v1/usage?keyId=${k.id}` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([
      {
        keyId: k.id,
        day: p.clock.now().toISOString().slice(0, 10),
        service: 'commerce',
        requests: 3,
        rejected: 2,
      },
    ]);
    expect(body.totals).toEqual({ requests: 3, rejected: 2, promptTokens: 0, completionTokens: 0 });
    const reader = await p.createKey({
      name: 'reader',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    expect((await p.request({ method: 'GET', url: '/v1/usage', key: reader.key })).statusCode).toBe(200);
    const unknown = await p.request({ method: 'GET', url: '/v1/usage?keyId=key_nope' });
    expect(unknown.statusCode).toBe(404);
    const badRange = await p.request({ method: 'GET', url: '/v1/usage?from=2026-02-01&to=2026-01-01' });
    expect(badRange.statusCode).toBe(400);
    const badDate = await p.request({ method: 'GET', url: '/v1/usage?from=yesterday' });
    expect(badDate.statusCode).toBe(400);
  });
});
