import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

describe.each(dialects)('API keys on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  it('creates a key, shows its value once, and lists it without the secret', async () => {
    const created = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'ci', type: 'development', services: ['workflow', 'commerce'], role: 'Writer' },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body.key).toMatch(/^DEV_API_[0-9A-Za-z]{38}$/);
    expect(body).toMatchObject({
      name: 'ci',
      type: 'development',
      role: 'Writer',
      prefix: 'DEV_API_',
      status: 'active',
    });
    expect(body.last4).toBe(body.key.slice(-4));
    const days = (Date.parse(body.expiresAt) - p.clock.now().getTime()) / 86_400_000;
    expect(Math.round(days)).toBe(90);

    const one = await p.request({ method: 'GET', url: `/v1/api-keys/${body.id}` });
    expect(one.statusCode).toBe(200);
    expect(one.json().key).toBeUndefined();
    expect(one.body).not.toContain(body.key);

    const list = await p.request({ method: 'GET', url: '/v1/api-keys' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((k: { id: string }) => k.id)).toContain(body.id);
    expect(list.body).not.toContain(body.key);
  });

  it('stores only a hash of the key', async () => {
    const { key, id } = await p.createKey({
      name: 'hash',
      type: 'production',
      services: ['*'],
      role: 'Reader',
    });
    const row = await p.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('production keys default to one year; a longer expiry is refused, a shorter one kept', async () => {
    const prod = await p.createKey({ name: 'prod', type: 'production', services: ['core'], role: 'Reader' });
    const got = (await p.request({ method: 'GET', url: `/v1/api-keys/${prod.id}` })).json();
    expect(Math.round((Date.parse(got.expiresAt) - p.clock.now().getTime()) / 86_400_000)).toBe(365);

    const tooLong = new Date(p.clock.now().getTime() + 100 * 86_400_000).toISOString();
    const refused = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'long', type: 'development', services: ['core'], role: 'Reader', expiresAt: tooLong },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('VALIDATION_ERROR');

    const short = new Date(p.clock.now().getTime() + 86_400_000).toISOString();
    const ok = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'short', type: 'development', services: ['core'], role: 'Reader', expiresAt: short },
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().expiresAt).toBe(short);
  });

  it('rejects bad bodies listing every offending field, and refuses mass assignment', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: {
        name: '',
        type: 'staging',
        services: ['nope'],
        role: 'Owner',
        accountId: 'acct_x',
        revokedAt: null,
      },
    });
    expect(res.statusCode).toBe(400);
    const fields = res.json().details.fields.map((f: { field: string }) => f.field);
    for (const f of [
      'body.name',
      'body.type',
      'body.services.0',
      'body.role',
      'body.accountId',
      'body.revokedAt',
    ]) {
      expect(fields).toContain(f);
    }
  });

  it('validates Custom scopes and CIDRs', async () => {
    const noScopes = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'c', type: 'development', services: ['commerce'], role: 'Custom' },
    });
    expect(noScopes.statusCode).toBe(400);
    const foreign = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: {
        name: 'c',
        type: 'development',
        services: ['commerce'],
        role: 'Custom',
        scopes: ['game:read'],
      },
    });
    expect(foreign.statusCode).toBe(400);
    const badIp = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: {
        name: 'c',
        type: 'development',
        services: ['core'],
        role: 'Reader',
        allowedIps: ['10.0.0.0/99'],
      },
    });
    expect(badIp.statusCode).toBe(400);
    expect(badIp.json().details.fields[0].field).toBe('allowedIps');
  });

  it('a key cannot grant more than it holds', async () => {
    const limited = await p.createKey({
      name: 'core admin',
      type: 'development',
      services: ['core'],
      role: 'Admin',
    });
    const res = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      key: limited.key,
      payload: { name: 'escalate', type: 'development', services: ['*'], role: 'Admin' },
    });
    expect(res.statusCode).toBe(403);
    const ok = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      key: limited.key,
      payload: { name: 'fine', type: 'development', services: ['core'], role: 'Reader' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('a key cannot rotate a key broader than itself (the new value would be its grant)', async () => {
    const limited = await p.createKey({
      name: 'custom core admin',
      type: 'development',
      services: ['core'],
      role: 'Custom',
      scopes: ['core:admin', 'core:read'],
    });
    const broad = await p.createKey({ name: 'broad', type: 'production', services: ['*'], role: 'Admin' });
    const refused = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${broad.id}/rotate`,
      key: limited.key,
      payload: { gracePeriodSeconds: 60 },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    expect(refused.body).not.toMatch(/PROD_API_/);
    // The broad key is untouched: its value still works.
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: broad.key })).statusCode).toBe(200);
    // A key within the caller's grant, and the caller itself, may be rotated.
    const narrow = await p.createKey(
      { name: 'narrow', type: 'development', services: ['core'], role: 'Custom', scopes: ['core:read'] },
      limited.key,
    );
    for (const id of [narrow.id, limited.id]) {
      const ok = await p.request({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, key: limited.key });
      expect(ok.statusCode).toBe(200);
    }
  });

  it('key management needs core:admin', async () => {
    const writer = await p.createKey({ name: 'w', type: 'development', services: ['core'], role: 'Writer' });
    const res = await p.request({ method: 'GET', url: '/v1/api-keys', key: writer.key });
    expect(res.statusCode).toBe(403);
    expect(res.json().details.requiredScope).toBe('core:admin');
  });

  it('patches role, scopes, services, IPs and quota; updatedAt moves; a revoked key cannot change', async () => {
    const { id } = await p.createKey({ name: 'p', type: 'development', services: ['core'], role: 'Reader' });
    p.clock.advance(5);
    const res = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${id}`,
      payload: {
        name: 'p2',
        role: 'Custom',
        services: ['commerce'],
        scopes: ['commerce:read'],
        allowedIps: ['::1'],
        dailyQuota: 7,
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'p2',
      role: 'Custom',
      services: ['commerce'],
      scopes: ['commerce:read'],
      allowedIps: ['::1'],
      dailyQuota: 7,
    });
    expect(res.json().updatedAt > res.json().createdAt).toBe(true);
    const empty = await p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, payload: {} });
    expect(empty.statusCode).toBe(400);
    await p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` });
    const late = await p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, payload: { name: 'x' } });
    expect(late.statusCode).toBe(409);
  });

  it('revocation takes effect at once and is idempotent', async () => {
    const { key, id } = await p.createKey({
      name: 'r',
      type: 'development',
      services: ['core'],
      role: 'Admin',
    });
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key })).statusCode).toBe(200);
    expect((await p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` })).statusCode).toBe(204);
    const after = await p.request({ method: 'GET', url: '/v1/api-keys', key });
    expect(after.statusCode).toBe(401);
    expect(after.json().message).toMatch(/revoked/);
    expect((await p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` })).statusCode).toBe(204);
    const shown = (await p.request({ method: 'GET', url: `/v1/api-keys/${id}` })).json();
    expect(shown.status).toBe('revoked');
  });

  it('rotates: the new value works, the old one only through its grace period', async () => {
    const { key: oldKey, id } = await p.createKey({
      name: 'rot',
      type: 'production',
      services: ['core'],
      role: 'Admin',
    });
    const rotated = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${id}/rotate`,
      payload: { gracePeriodSeconds: 60 },
    });
    expect(rotated.statusCode).toBe(200);
    const newKey = rotated.json().key as string;
    expect(newKey).not.toBe(oldKey);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: newKey })).statusCode).toBe(200);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: oldKey })).statusCode).toBe(200);
    p.clock.advance(61);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: oldKey })).statusCode).toBe(401);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: newKey })).statusCode).toBe(200);

    const again = await p.request({ method: 'POST', url: `/v1/api-keys/${id}/rotate` });
    expect(again.statusCode).toBe(200);
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: newKey })).statusCode).toBe(401);
    const tooLong = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${id}/rotate`,
      payload: { gracePeriodSeconds: 8 * 86_400 },
    });
    expect(tooLong.statusCode).toBe(400);
  });

  it("another account's key is a 404", async () => {
    const otherAccount = 'acct_other';
    await p.ctx.db
      .insertInto('accounts')
      .values({
        id: otherAccount,
        email: `${dialect}-other@example.com`,
        name: 'Other',
        created_at: new Date().toISOString(),
      })
      .execute();
    const keys = p.ctx.apis.auth!.keys;
    const foreign = await keys.create(
      otherAccount,
      { name: 'theirs', type: 'development', services: ['*'], role: 'Admin' },
      null,
    );
    for (const [method, url] of [
      ['GET', `/v1/api-keys/${foreign.id}`],
      ['PATCH', `/v1/api-keys/${foreign.id}`],
      ['DELETE', `/v1/api-keys/${foreign.id}`],
      ['POST', `/v1/api-keys/${foreign.id}/rotate`],
    ] as const) {
      const res = await p.request({
        method,
        url,
        ...(method === 'PATCH' ? { payload: { name: 'mine' } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('API_KEY_NOT_FOUND');
    }
    const list = await p.request({ method: 'GET', url: '/v1/api-keys?limit=200' });
    expect(list.json().data.map((k: { id: string }) => k.id)).not.toContain(foreign.id);
    // Their key still works for them.
    expect((await p.request({ method: 'GET', url: '/v1/api-keys', key: foreign.key })).statusCode).toBe(200);
  });

  it('pages with limit and cursor, sorts, filters and projects', async () => {
    for (let i = 0; i < 5; i++) {
      await p.createKey({ name: `page-${i}`, type: 'development', services: ['core'], role: 'Reader' });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/api-keys?limit=2&type=development${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((k: { id: string; type: string }) => k.id));
      for (const k of body.data) expect(k.type).toBe('development');
      cursor = body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);

    const byName = await p.request({
      method: 'GET',
      url: '/v1/api-keys?sort=name&order=desc&fields=name&limit=3',
    });
    const names = byName.json().data.map((k: { name: string }) => k.name);
    expect(names).toEqual([...names].sort().reverse());
    expect(Object.keys(byName.json().data[0]).sort()).toEqual(['id', 'name']);

    const bad = await p.request({ method: 'GET', url: '/v1/api-keys?sort=hash&colour=red&limit=1000' });
    expect(bad.statusCode).toBe(400);
    const fields = bad.json().details.fields.map((f: { field: string }) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['sort', 'colour', 'limit']));
  });

  it('pages by a field that may be null (lastUsedAt): every key once, nulls last in either order', async () => {
    const used: string[] = [];
    for (let i = 0; i < 3; i++) {
      const k = await p.createKey({
        name: `used-${i}`,
        type: 'development',
        services: ['core'],
        role: 'Reader',
      });
      p.clock.advance(61);
      expect((await p.request({ method: 'GET', url: '/v1/usage', key: k.key })).statusCode).toBe(200);
      used.push(k.id);
    }
    await p.createKey({ name: 'never-used', type: 'development', services: ['core'], role: 'Reader' });
    const all = (await p.request({ method: 'GET', url: '/v1/api-keys?limit=200' })).json().data as Array<{
      id: string;
    }>;
    // lastUsedAt is written off the request path: wait until the three uses show.
    await expect
      .poll(async () => {
        const rows = (await p.request({ method: 'GET', url: '/v1/api-keys?limit=200' })).json().data;
        return used.every((id) => rows.find((k: { id: string }) => k.id === id)?.lastUsedAt);
      })
      .toBe(true);
    for (const order of ['asc', 'desc'] as const) {
      const seen: Array<{ id: string; lastUsedAt: string | null }> = [];
      let cursor: string | null = null;
      do {
        const url: string = `/v1/api-keys?limit=2&sort=lastUsedAt&order=${order}&fields=lastUsedAt${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await p.request({ method: 'GET', url });
        expect(res.statusCode).toBe(200);
        seen.push(...res.json().data);
        cursor = res.json().nextCursor;
      } while (cursor);
      expect(seen.map((k) => k.id).sort()).toEqual(all.map((k) => k.id).sort());
      const firstNull = seen.findIndex((k) => k.lastUsedAt === null);
      expect(firstNull).toBeGreaterThan(0);
      expect(seen.slice(firstNull).every((k) => k.lastUsedAt === null)).toBe(true);
      const times = seen.slice(0, firstNull).map((k) => k.lastUsedAt as string);
      expect(times).toEqual(order === 'asc' ? [...times].sort() : [...times].sort().reverse());
    }
  });

  it('an offset beyond a 32-bit integer is a 400 naming it, not a database error', async () => {
    for (const offset of ['99999999999999999999', '2147483648']) {
      const res = await p.request({ method: 'GET', url: `/v1/api-keys?offset=${offset}` });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.json().details)).toMatch(/offset/);
    }
    const far = await p.request({ method: 'GET', url: '/v1/api-keys?offset=2147483647' });
    expect(far.statusCode).toBe(200);
    expect(far.json()).toEqual({ data: [], nextCursor: null });
  });

  describe('shared auth suite', () => {
    authSuite(() => p, { method: 'GET', url: '/v1/api-keys', service: 'core', weakRole: 'Writer' });
  });
});
