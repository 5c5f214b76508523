import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

/** Every concrete scope a shopper's token could be given by a full Admin key. */
const ALL_SCOPES = ['core', 'workflow', 'commerce', 'game'].flatMap((s) =>
  ['read', 'write', 'delete', 'admin'].map((op) => `${s}:${op}`),
);

/**
 * Audit item 2: customer tokens act only on customer-facing routes, inherit the issuing key's
 * address rules as they are now, and die with the key's value on rotation. Item 21: the token
 * does not show the account id.
 */
describe.each(dialects)('customer tokens are a customer credential only, on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  /** A full Admin key of the integration and a token it mints with every scope it holds. */
  async function shopperToken(key?: string) {
    const shop = key
      ? null
      : await p.createKey({ name: 'shop', type: 'production', services: ['*'], role: 'Admin' });
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      key: key ?? shop?.key,
      payload: { customerId: 'shopper-1', scopes: ALL_SCOPES },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    return { shop, token: minted.json().token as string, expiresAt: minted.json().expiresAt as string };
  }

  it('a token carrying core:admin cannot manage keys, mint tokens or read usage', async () => {
    const { token } = await shopperToken();
    const create = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      key: token,
      payload: { name: 'escape', type: 'production', services: ['*'], role: 'Admin' },
    });
    expect(create.statusCode).toBe(403);
    expect(create.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    expect(create.body).not.toMatch(/PROD_API_|DEV_API_/);
    for (const [method, url] of [
      ['GET', '/v1/api-keys'],
      ['GET', '/v1/usage'],
      ['POST', '/v1/auth/tokens'],
    ] as const) {
      const res = await p.request({
        method,
        url,
        key: token,
        ...(method === 'POST' ? { payload: { customerId: 'x', scopes: ['commerce:read'] } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
  });

  it('is refused on executions, credentials, workflows, discounts, inventory and orders', async () => {
    const { token } = await shopperToken();
    const calls = [
      ['GET', '/api/v1/executions'],
      ['GET', '/api/v1/credentials'],
      ['POST', '/api/v1/credentials', { name: 'c', type: 'httpHeaderAuth', data: { name: 'x', value: 'y' } }],
      ['GET', '/api/v1/workflows'],
      ['POST', '/v1/discounts', { code: 'FREE100', type: 'percentage', value: 100 }],
      ['GET', '/v1/discounts'],
      ['GET', '/v1/inventory/var_candle_8oz'],
      ['PUT', '/v1/inventory/var_candle_8oz', { onHand: 0 }],
      ['GET', '/v1/orders'],
      ['GET', '/v1/products'],
    ] as const;
    for (const [method, url, payload] of calls) {
      const res = await p.request({ method, url, key: token, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
      expect(res.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    }
    // The discount was not created by the refused call.
    const codes = await p.request({ method: 'GET', url: '/v1/discounts' });
    expect(codes.body).not.toContain('FREE100');
  });

  it('still works on the customer-facing routes: blends and cart', async () => {
    const { token } = await shopperToken();
    for (const url of ['/api/custom-blends', '/api/custom-blends/categories', '/api/cart']) {
      const res = await p.request({ method: 'GET', url, key: token });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
  });

  it("inherits the key's allowed IPs as they are now: restricting the key elsewhere stops its tokens", async () => {
    const { shop, token } = await shopperToken();
    expect((await p.request({ method: 'GET', url: '/api/cart', key: token })).statusCode).toBe(200);
    const restricted = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${shop?.id}`,
      payload: { allowedIps: ['198.51.100.0/24'] },
    });
    expect(restricted.statusCode).toBe(200);
    const refused = await p.request({ method: 'GET', url: '/api/cart', key: token });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('FORBIDDEN');
    const inside = await p.request({
      method: 'GET',
      url: '/api/cart',
      key: token,
      remoteAddress: '198.51.100.7',
    });
    expect(inside.statusCode).toBe(200);
  });

  it('dies when its key is rotated, grace period or not; a new token of the new value works', async () => {
    const { shop, token } = await shopperToken();
    expect((await p.request({ method: 'GET', url: '/api/cart', key: token })).statusCode).toBe(200);
    const rotated = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${shop?.id}/rotate`,
      payload: { gracePeriodSeconds: 3600 },
    });
    expect(rotated.statusCode).toBe(200);
    const dead = await p.request({ method: 'GET', url: '/api/cart', key: token });
    expect(dead.statusCode).toBe(401);
    expect(dead.json().code).toBe('UNAUTHORIZED');
    // The old value still works through its grace period; a token it mints ends with it.
    const viaOld = await shopperToken(shop?.key);
    expect(Date.parse(viaOld.expiresAt)).toBeLessThanOrEqual(p.clock.now().getTime() + 3600_000);
    expect((await p.request({ method: 'GET', url: '/api/cart', key: viaOld.token })).statusCode).toBe(200);
    const viaNew = await shopperToken(rotated.json().key);
    expect((await p.request({ method: 'GET', url: '/api/cart', key: viaNew.token })).statusCode).toBe(200);
    // A second rotation ends both.
    await p.request({ method: 'POST', url: `/v1/api-keys/${shop?.id}/rotate`, payload: {} });
    for (const t of [viaOld.token, viaNew.token])
      expect((await p.request({ method: 'GET', url: '/api/cart', key: t })).statusCode).toBe(401);
  });

  it('dies when its key is revoked', async () => {
    const { shop, token } = await shopperToken();
    expect((await p.request({ method: 'DELETE', url: `/v1/api-keys/${shop?.id}` })).statusCode).toBe(204);
    expect((await p.request({ method: 'GET', url: '/api/cart', key: token })).statusCode).toBe(401);
  });

  it('does not show the account id (audit item 21)', async () => {
    const { token } = await shopperToken();
    const [header = '', payload = ''] = token.split('.');
    const readable = [
      Buffer.from(header, 'base64url').toString(),
      Buffer.from(payload, 'base64url').toString(),
      JSON.stringify(decodeJwt(token)),
      JSON.stringify(decodeProtectedHeader(token)),
    ].join('\n');
    expect(readable).not.toContain(p.accountId);
    expect(Object.keys(decodeJwt(token))).not.toContain('acct');
    // The token still acts for the key's account, found from the key on the server.
    const cart = await p.request({ method: 'GET', url: '/api/cart', key: token });
    expect(cart.statusCode).toBe(200);
  });
});
