import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();
const DAY_MS = 86_400_000;

/**
 * Audit items 7 and 8: a key may not create or change a key that exceeds it (type, expiry, daily
 * quota, addresses, scopes), and may change, revoke or rotate only keys it holds all of.
 */
describe.each(dialects)('a key manages only keys within itself, on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  const create = (key: string, body: Record<string, unknown>) =>
    p.request({ method: 'POST', url: '/v1/api-keys', key, payload: body });
  const patch = (key: string, id: string, body: Record<string, unknown>) =>
    p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, key, payload: body });
  const expectRefused = (res: Awaited<ReturnType<typeof create>>, exceeds: string[]) => {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    expect(res.json().details.exceeds).toEqual(exceeds);
    expect(res.body).not.toMatch(/PROD_API_|DEV_API_/);
  };

  it('a development key cannot mint a production key', async () => {
    const dev = await p.createKey({ name: 'dev admin', type: 'development', services: ['*'], role: 'Admin' });
    expectRefused(
      await create(dev.key, { name: 'prod', type: 'production', services: ['core'], role: 'Reader' }),
      ['type'],
    );
    const ok = await create(dev.key, {
      name: 'dev',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    expect(ok.statusCode).toBe(201);
  });

  it('a created key may not outlive its creator; left unsaid, it ends with the creator', async () => {
    const expiresAt = new Date(p.clock.now().getTime() + 10 * DAY_MS).toISOString();
    const short = await p.createKey({
      name: 'short-lived admin',
      type: 'production',
      services: ['core'],
      role: 'Admin',
      expiresAt,
    });
    const later = new Date(p.clock.now().getTime() + 300 * DAY_MS).toISOString();
    expectRefused(
      await create(short.key, {
        name: 'longer',
        type: 'production',
        services: ['core'],
        role: 'Reader',
        expiresAt: later,
      }),
      ['expiresAt'],
    );
    const defaulted = await create(short.key, {
      name: 'default',
      type: 'production',
      services: ['core'],
      role: 'Reader',
    });
    expect(defaulted.statusCode).toBe(201);
    expect(defaulted.json().expiresAt).toBe(expiresAt);
  });

  it('a created key may not have a higher quota; a key cannot raise its own', async () => {
    const small = await p.createKey({
      name: 'quota 100',
      type: 'production',
      services: ['core'],
      role: 'Admin',
      dailyQuota: 100,
    });
    expectRefused(
      await create(small.key, {
        name: 'big',
        type: 'production',
        services: ['core'],
        role: 'Reader',
        dailyQuota: 100_000_000,
      }),
      ['dailyQuota'],
    );
    // Left unsaid, the quota is the creator's, not the type's default of 50,000.
    const defaulted = await create(small.key, {
      name: 'default quota',
      type: 'production',
      services: ['core'],
      role: 'Reader',
    });
    expect(defaulted.statusCode).toBe(201);
    expect(defaulted.json().dailyQuota).toBe(100);
    // Raising its own quota, explicitly or by resetting it to the type default, is refused.
    expectRefused(await patch(small.key, small.id, { dailyQuota: 1_000_000 }), ['dailyQuota']);
    expectRefused(await patch(small.key, small.id, { dailyQuota: null }), ['dailyQuota']);
    const lowered = await patch(small.key, small.id, { dailyQuota: 50 });
    expect(lowered.statusCode).toBe(200);
    expect(lowered.json().dailyQuota).toBe(50);
    const shown = await p.request({ method: 'GET', url: `/v1/api-keys/${small.id}` });
    expect(shown.json().dailyQuota).toBe(50);
  });

  it('an IP-restricted key cannot create or widen a key beyond its own addresses', async () => {
    const office = await p.createKey({
      name: 'office admin',
      type: 'production',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['203.0.113.0/24', '2001:db8:1::/48'],
    });
    const from = { remoteAddress: '203.0.113.10' };
    const post = (body: Record<string, unknown>) =>
      p.request({ method: 'POST', url: '/v1/api-keys', key: office.key, payload: body, ...from });
    const base = { name: 'k', type: 'production', services: ['core'], role: 'Reader' };
    for (const allowedIps of [
      [],
      ['0.0.0.0/0'],
      ['203.0.0.0/16'],
      ['203.0.113.0/24', '198.51.100.1'],
      ['::/0'],
    ]) {
      expectRefused(await post({ ...base, allowedIps }), ['allowedIps']);
    }
    const inside = await post({
      ...base,
      allowedIps: ['203.0.113.128/25', '2001:db8:1:2::/64', '::ffff:203.0.113.9'],
    });
    expect(inside.statusCode, inside.body).toBe(201);
    // Left unsaid, the new key gets the creator's addresses, not "any address".
    const defaulted = await post(base);
    expect(defaulted.statusCode).toBe(201);
    expect(defaulted.json().allowedIps).toEqual(['203.0.113.0/24', '2001:db8:1::/48']);
    // Nor may it lift the rules of a key it manages (or its own).
    const lift = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${inside.json().id}`,
      key: office.key,
      payload: { allowedIps: [] },
      ...from,
    });
    expectRefused(lift, ['allowedIps']);
    const self = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${office.id}`,
      key: office.key,
      payload: { allowedIps: ['0.0.0.0/0'] },
      ...from,
    });
    expectRefused(self, ['allowedIps']);
  });

  it('a core-only admin cannot narrow, IP-lock, revoke or rotate a full Admin key (item 8)', async () => {
    const coreAdmin = await p.createKey({
      name: 'core admin',
      type: 'production',
      services: ['core'],
      role: 'Admin',
    });
    const full = await p.createKey({
      name: 'full admin',
      type: 'production',
      services: ['*'],
      role: 'Admin',
    });
    const calls = [
      ['PATCH', `/v1/api-keys/${full.id}`, { services: ['core'] }],
      ['PATCH', `/v1/api-keys/${full.id}`, { allowedIps: ['192.0.2.1'] }],
      ['PATCH', `/v1/api-keys/${full.id}`, { name: 'renamed' }],
      ['DELETE', `/v1/api-keys/${full.id}`, undefined],
      ['POST', `/v1/api-keys/${full.id}/rotate`, {}],
    ] as const;
    for (const [method, url, payload] of calls) {
      const res = await p.request({ method, url, key: coreAdmin.key, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url} ${JSON.stringify(payload)}: ${res.body}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    // The owner's key is untouched and still works everywhere.
    const shown = (await p.request({ method: 'GET', url: `/v1/api-keys/${full.id}` })).json();
    expect(shown).toMatchObject({ name: 'full admin', services: ['*'], allowedIps: [], status: 'active' });
    expect((await p.request({ method: 'GET', url: '/api/cart', key: full.key })).statusCode).toBe(200);
    // A key within the caller it may manage, and revoke.
    const narrow = await p.createKey(
      { name: 'narrow', type: 'production', services: ['core'], role: 'Reader' },
      coreAdmin.key,
    );
    expect((await patch(coreAdmin.key, narrow.id, { name: 'narrower' })).statusCode).toBe(200);
    expect(
      (await p.request({ method: 'DELETE', url: `/v1/api-keys/${narrow.id}`, key: coreAdmin.key }))
        .statusCode,
    ).toBe(204);
  });

  it('a development key cannot rotate a production key (the new value would be a production key)', async () => {
    const dev = await p.createKey({ name: 'dev all', type: 'development', services: ['*'], role: 'Admin' });
    const prod = await p.createKey({
      name: 'prod reader',
      type: 'production',
      services: ['core'],
      role: 'Reader',
    });
    const res = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${prod.id}/rotate`,
      key: dev.key,
      payload: {},
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().details.exceeds).toEqual(['type', 'expiresAt', 'dailyQuota']);
    expect(res.body).not.toMatch(/PROD_API_/);
  });
});
