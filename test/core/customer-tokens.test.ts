import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';

const dialects = await testDialects();
const ISSUER = 'api-platform';
const AUDIENCE = 'api-platform:customer';

describe.each(dialects)('customer tokens on %s', (dialect) => {
  let p: TestPlatform;
  let shop: { key: string; id: string };
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      modules: [authModule, healthModule, probeModule],
      env: { CUSTOMER_TOKEN_DEFAULT_TTL_SECONDS: '900', CUSTOMER_TOKEN_MAX_TTL_SECONDS: '7200' },
    });
    shop = await p.createKey({
      name: 'shop',
      type: 'production',
      services: ['commerce', 'game'],
      role: 'Writer',
      dailyQuota: 50,
    });
  });
  afterAll(async () => {
    await p.close();
  });

  const mint = (body: Record<string, unknown>, key = shop.key) =>
    p.request({ method: 'POST', url: '/v1/auth/tokens', key, payload: body });
  const call = (url: string, key: string) => p.request({ method: 'GET', url, key });

  it('is accepted on every service its scopes name and refused on the others', async () => {
    const res = await mint({ customerId: 'cust-7', scopes: ['commerce:read', 'game:read'] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ tokenType: 'Bearer', customerId: 'cust-7' });
    // Default life from CUSTOMER_TOKEN_DEFAULT_TTL_SECONDS.
    expect(Date.parse(body.expiresAt)).toBe(Math.floor(p.clock.now().getTime() / 1000) * 1000 + 900_000);
    for (const url of ['/probe/commerce', '/probe/game']) {
      const ok = await call(url, body.token);
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({
        kind: 'customer_token',
        customerId: 'cust-7',
        keyId: shop.id,
        accountId: p.accountId,
      });
    }
    const llm = await call('/probe/llm', body.token);
    expect(llm.statusCode).toBe(403);
    expect(llm.json().code).toBe('FORBIDDEN');
    // The key itself may write commerce; the read-only token may not.
    expect((await p.request({ method: 'POST', url: '/probe/commerce', key: shop.key })).statusCode).toBe(200);
    expect((await p.request({ method: 'POST', url: '/probe/commerce', key: body.token })).statusCode).toBe(
      403,
    );
  });

  it('counts against the issuing key’s daily quota, shared with the key', async () => {
    const issuer = await p.createKey({
      name: 'quota-issuer',
      type: 'development',
      services: ['commerce'],
      role: 'Reader',
      dailyQuota: 4,
    });
    // Minting itself is a request of the key: 1 of 4.
    const minted = await mint({ customerId: 'c1', scopes: ['commerce:read'] }, issuer.key);
    expect(minted.headers['x-ratelimit-remaining']).toBe('3');
    const { token } = minted.json();
    const first = await call('/probe/commerce', token);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('4');
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    const byKey = await call('/probe/commerce', issuer.key);
    expect(byKey.headers['x-ratelimit-remaining']).toBe('1');
    expect((await call('/probe/commerce', token)).headers['x-ratelimit-remaining']).toBe('0');
    const refused = await call('/probe/commerce', token);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await call('/probe/commerce', issuer.key)).statusCode).toBe(429);
  });

  it('is bounded by the key as it is now: narrowing the key narrows its tokens', async () => {
    const k = await p.createKey({
      name: 'narrowed',
      type: 'development',
      services: ['commerce', 'game'],
      role: 'Reader',
    });
    const { token } = (
      await mint({ customerId: 'c2', scopes: ['commerce:read', 'game:read'] }, k.key)
    ).json();
    expect((await call('/probe/game', token)).statusCode).toBe(200);
    const patched = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${k.id}`,
      payload: { services: ['commerce'] },
    });
    expect(patched.statusCode).toBe(200);
    expect((await call('/probe/game', token)).statusCode).toBe(403);
    expect((await call('/probe/commerce', token)).statusCode).toBe(200);
  });

  it('a token minted by a key expiring sooner than the ttl ends with the key', async () => {
    const expiresAt = new Date(p.clock.now().getTime() + 120_000).toISOString();
    const k = await p.createKey({
      name: 'short',
      type: 'development',
      services: ['commerce'],
      role: 'Reader',
      expiresAt,
    });
    const res = await mint({ customerId: 'c3', scopes: ['commerce:read'], ttlSeconds: 3600 }, k.key);
    expect(res.statusCode).toBe(201);
    expect(Date.parse(res.json().expiresAt)).toBeLessThanOrEqual(Date.parse(expiresAt));
  });

  it('refusals: broader scopes 403, token minting 403, ttl above the maximum 400', async () => {
    const broad = await mint({ customerId: 'c', scopes: ['commerce:read', 'llm:read'] });
    expect(broad.statusCode).toBe(403);
    expect(broad.json().details.scopes).toEqual(['llm:read']);
    const admin = await mint({ customerId: 'c', scopes: ['commerce:admin'] });
    expect(admin.statusCode).toBe(403);
    const { token } = (await mint({ customerId: 'c', scopes: ['commerce:read'] })).json();
    const byToken = await mint({ customerId: 'c', scopes: ['commerce:read'] }, token);
    expect(byToken.statusCode).toBe(403);
    expect(byToken.json().code).toBe('FORBIDDEN');
    const long = await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: 7201 });
    expect(long.statusCode).toBe(400);
    expect(long.json().details.fields).toEqual([
      { field: 'body.ttlSeconds', message: 'must be at most 7200' },
    ]);
    expect((await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: 7200 })).statusCode).toBe(
      201,
    );
    const stringTtl = await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: '600' });
    expect(stringTtl.statusCode).toBe(400);
  });

  describe('forged or stale tokens are 401', () => {
    // The binding to the key's current value, as a minted token carries it.
    let kv: string;
    beforeAll(async () => {
      kv = decodeJwt((await mint({ customerId: 'c', scopes: ['commerce:read'] })).json().token).kv as string;
    });
    const claims = () => ({ scope: 'commerce:read', key: shop.id, kv });
    const secret = () => p.ctx.secrets.derive('jwt:customer-tokens');
    const signed = (opts: {
      issuer?: string;
      audience?: string;
      alg?: string;
      exp?: number | null;
      claims?: Record<string, unknown>;
    }) => {
      const nowS = Math.floor(p.clock.now().getTime() / 1000);
      let jwt = new SignJWT(opts.claims ?? claims())
        .setProtectedHeader({ alg: opts.alg ?? 'HS256' })
        .setIssuer(opts.issuer ?? ISSUER)
        .setAudience(opts.audience ?? AUDIENCE)
        .setSubject('c')
        .setIssuedAt(nowS);
      if (opts.exp !== null) jwt = jwt.setExpirationTime(opts.exp ?? nowS + 600);
      return jwt.sign(secret());
    };
    const expect401 = async (token: string, message = /token/i) => {
      const res = await call('/probe/commerce', token);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: true, code: 'UNAUTHORIZED' });
      expect(res.json().message).toMatch(message);
    };

    it('control: a hand-made token with the right secret and claims is accepted', async () => {
      expect((await call('/probe/commerce', await signed({}))).statusCode).toBe(200);
    });

    it('wrong issuer', async () => {
      await expect401(await signed({ issuer: 'someone-else' }));
    });

    it('wrong audience', async () => {
      await expect401(await signed({ audience: 'api-platform' }));
    });

    it('another algorithm with the right secret', async () => {
      await expect401(await signed({ alg: 'HS512' }));
    });

    it('no expiry claim', async () => {
      await expect401(await signed({ exp: null }));
    });

    it('alg none with otherwise valid claims', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const nowS = Math.floor(p.clock.now().getTime() / 1000);
      const payload = Buffer.from(
        JSON.stringify({ ...claims(), iss: ISSUER, aud: AUDIENCE, sub: 'c', iat: nowS, exp: nowS + 600 }),
      ).toString('base64url');
      await expect401(`${header}.${payload}.`);
    });

    it('a tampered payload keeps the old signature', async () => {
      const [h, , s] = (await signed({})).split('.');
      const nowS = Math.floor(p.clock.now().getTime() / 1000);
      const payload = Buffer.from(
        JSON.stringify({
          scope: 'commerce:write',
          key: shop.id,
          kv,
          iss: ISSUER,
          aud: AUDIENCE,
          sub: 'c',
          exp: nowS + 600,
        }),
      ).toString('base64url');
      await expect401(`${h}.${payload}.${s}`);
    });

    it('bound to another value of the key (or another key)', async () => {
      await expect401(await signed({ claims: { ...claims(), kv: 'AAAAAAAAAAAAAAAAAAAAAA' } }));
    });

    it('without a binding (minted before tokens were bound to the key value)', async () => {
      await expect401(await signed({ claims: { scope: 'commerce:read', key: shop.id, acct: p.accountId } }));
    });

    it('an unknown issuing key', async () => {
      await expect401(await signed({ claims: { ...claims(), key: 'key_doesnotexist' } }));
    });

    it('expired, by the clock', async () => {
      const res = await mint({ customerId: 'c', scopes: ['commerce:read'], ttlSeconds: 120 });
      const { token } = res.json();
      p.clock.advance(119);
      expect((await call('/probe/commerce', token)).statusCode).toBe(200);
      p.clock.advance(2);
      await expect401(token, /expired/);
    });
  });

  it('a revoked or expired issuing key kills its tokens', async () => {
    const issuer = await p.createKey({
      name: 'dies',
      type: 'development',
      services: ['commerce'],
      role: 'Reader',
    });
    const { token } = (await mint({ customerId: 'c', scopes: ['commerce:read'] }, issuer.key)).json();
    expect((await call('/probe/commerce', token)).statusCode).toBe(200);
    expect((await p.request({ method: 'DELETE', url: `/v1/api-keys/${issuer.id}` })).statusCode).toBe(204);
    const after = await call('/probe/commerce', token);
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe('UNAUTHORIZED');
  });
});
