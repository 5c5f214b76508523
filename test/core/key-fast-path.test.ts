import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { SharedDatabase } from './support/shared-db.js';

// A key verified once is served from the verification cache (no checksum, hash or database
// look-up); these tests pin what a cache hit must still check, and that cached key views never
// hide a change.

const dialects = await testDialects();
const nextTurn = () => new Promise((r) => setImmediate(r));

describe.each(dialects)('cached key verification on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { KEY_CACHE_TTL_SECONDS: '3600' } });
  });
  afterAll(async () => {
    await p.close();
  });

  const usage = (key: string, remoteAddress?: string) =>
    p.request({ method: 'GET', url: '/v1/usage', key, ...(remoteAddress ? { remoteAddress } : {}) });

  it('a cached key still expires', async () => {
    const expiresAt = new Date(p.clock.now().getTime() + 86_400_000).toISOString();
    const { key } = await p.createKey({
      name: 'short',
      type: 'development',
      services: ['core'],
      role: 'Reader',
      expiresAt,
    });
    expect((await usage(key)).statusCode).toBe(200);
    expect((await usage(key)).statusCode).toBe(200); // served from the cache
    p.clock.advance(86_400);
    const late = await usage(key);
    expect(late.statusCode).toBe(401);
    expect(late.json().message).toMatch(/expired/);
  });

  it('IP rules apply on every request of a cached key', async () => {
    const { key } = await p.createKey({
      name: 'ip',
      type: 'development',
      services: ['core'],
      role: 'Reader',
      allowedIps: ['10.1.2.0/24'],
    });
    expect((await usage(key, '10.1.2.3')).statusCode).toBe(200);
    const outside = await usage(key, '10.9.9.9');
    expect(outside.statusCode).toBe(403);
    expect(outside.json().code).toBe('FORBIDDEN');
    expect((await usage(key, '10.1.2.4')).statusCode).toBe(200);
  });

  it('a value that only shares the start of a cached key is refused and leaves the key alone', async () => {
    const { key } = await p.createKey({
      name: 'sel',
      type: 'production',
      services: ['core'],
      role: 'Reader',
    });
    expect((await usage(key)).statusCode).toBe(200);
    const flip = (c: string) => (c === 'a' ? 'b' : 'a');
    // Same selector, another body: the checksum no longer matches.
    const body = key.slice(0, -10) + flip(key.at(-10)!) + key.slice(-9);
    const wrongBody = await usage(body);
    expect(wrongBody.statusCode).toBe(401);
    expect(wrongBody.json().message).toBe('API key is invalid');
    // Same everything but the last character.
    const lastChar = key.slice(0, -1) + flip(key.at(-1)!);
    expect((await usage(lastChar)).statusCode).toBe(401);
    // A longer and a shorter value with the same start.
    expect((await usage(`${key}x`)).statusCode).toBe(401);
    expect((await usage(key.slice(0, -1))).statusCode).toBe(401);
    expect((await usage(key)).statusCode).toBe(200);
  });

  it('the old value of a rotated key is refused once its grace period ends, even when cached', async () => {
    const { key, id } = await p.createKey({
      name: 'rot',
      type: 'production',
      services: ['core'],
      role: 'Admin',
    });
    expect((await usage(key)).statusCode).toBe(200);
    const rotated = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${id}/rotate`,
      payload: { gracePeriodSeconds: 30 },
    });
    expect(rotated.statusCode).toBe(200);
    expect((await usage(key)).statusCode).toBe(200);
    expect((await usage(key)).statusCode).toBe(200); // the old value, now cached
    p.clock.advance(31);
    expect((await usage(key)).statusCode).toBe(401);
    expect((await usage(rotated.json().key)).statusCode).toBe(200);
  });

  it('a key view shows lastUsedAt once the key has been used', async () => {
    const { key, id } = await p.createKey({
      name: 'lu',
      type: 'development',
      services: ['core'],
      role: 'Reader',
    });
    const view = () => p.request({ method: 'GET', url: `/v1/api-keys/${id}` });
    expect((await view()).json().lastUsedAt).toBeNull();
    expect((await view()).json().lastUsedAt).toBeNull();
    expect((await usage(key)).statusCode).toBe(200);
    // lastUsedAt is written off the request path: poll until the write has landed.
    const lastUsedAt = await until(
      async () => (await view()).json().lastUsedAt ?? undefined,
      'lastUsedAt written',
      20_000,
    );
    expect(lastUsedAt).toBe(p.clock.now().toISOString());
  });

  it('a key view follows changes made in this process at once', async () => {
    const { id } = await p.createKey({ name: 'v1', type: 'development', services: ['core'], role: 'Reader' });
    const view = () => p.request({ method: 'GET', url: `/v1/api-keys/${id}` });
    expect((await view()).json().name).toBe('v1');
    const patched = await p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, payload: { name: 'v2' } });
    expect(patched.statusCode).toBe(200);
    expect((await view()).json().name).toBe('v2');
    await p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` });
    expect((await view()).json().status).toBe('revoked');
  });
});

describe.each(dialects)('key views across processes on %s', (dialect) => {
  let shared: SharedDatabase | null = null;
  afterEach(async () => {
    await shared?.close();
    shared = null;
  });

  it('a change made by another process shows from the next event-loop turn, whatever the cache TTL, without Redis', async () => {
    shared = new SharedDatabase(dialect);
    const env = { KEY_CACHE_TTL_SECONDS: '3600' };
    const a = await shared.app(env);
    const b = await shared.app(env);
    const boot = await a.ctx.apis.auth!.bootstrap();
    const adminKey = boot.createdKey!;
    const created = await a.ctx.apis.auth!.keys.create(
      boot.accountId,
      { name: 'before', type: 'development', services: ['core'], role: 'Reader' },
      null,
    );
    const viewIn = (app: typeof b.app) =>
      app.inject({
        method: 'GET',
        url: `/v1/api-keys/${created.id}`,
        headers: { authorization: `Bearer ${adminKey}` },
      });
    expect((await viewIn(b.app)).json().name).toBe('before');
    expect((await viewIn(b.app)).json().name).toBe('before');
    await a.ctx.apis.auth!.keys.update(boot.accountId, created.id, { name: 'after', dailyQuota: 9 }, null);
    // A request that arrives after the write: the database version is read once per turn.
    await nextTurn();
    const after = (await viewIn(b.app)).json();
    expect(after).toMatchObject({ name: 'after', dailyQuota: 9 });
    await a.ctx.apis.auth!.keys.revoke(boot.accountId, created.id);
    await nextTurn();
    expect((await viewIn(b.app)).json().status).toBe('revoked');
  });
});
