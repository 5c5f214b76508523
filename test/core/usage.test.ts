import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { TestClock } from '../helpers/clock.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';

const dialects = await testDialects();

describe.each(dialects)('usage on %s', (dialect) => {
  let p: TestPlatform;
  let other: { accountId: string; key: string; id: string };
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      clock: new TestClock('2026-05-31T23:59:00.000Z'),
      modules: [authModule, healthModule, probeModule],
    });
    // A second account with its own Admin key.
    const accountId = newId('acct');
    await p.ctx.db
      .insertInto('accounts')
      .values({
        id: accountId,
        email: `${accountId}@example.test`,
        name: 'Other',
        created_at: p.clock.now().toISOString(),
      })
      .execute();
    const created = await p.ctx.apis.auth!.keys.create(
      accountId,
      { name: 'other-admin', type: 'development', services: ['*'], role: 'Admin' },
      null,
    );
    other = { accountId, key: created.key, id: created.id };
  });
  afterAll(async () => {
    await p.close();
  });

  const usage = (query: string, key?: string) => p.request({ method: 'GET', url: `/v1/usage${query}`, key });

  it('counts per key, UTC day and service, with rejections; tokens count under their key', async () => {
    const k = await p.createKey({
      name: 'counted',
      type: 'development',
      services: ['commerce', 'game'],
      role: 'Reader',
      dailyQuota: 3,
    });
    const token = (
      await p.request({
        method: 'POST',
        url: '/v1/auth/tokens',
        key: k.key,
        payload: { customerId: 'c', scopes: ['game:read'] },
      })
    ).json().token;
    // May 31: token mint (core) 1, commerce 1, game via token 1, then one commerce rejected.
    await p.request({ method: 'GET', url: '/probe/commerce', key: k.key });
    await p.request({ method: 'GET', url: '/probe/game', key: token });
    expect((await p.request({ method: 'GET', url: '/probe/commerce', key: k.key })).statusCode).toBe(429);
    // June 1: two commerce requests.
    p.clock.set('2026-06-01T00:00:05.000Z');
    await p.request({ method: 'GET', url: '/probe/commerce', key: k.key });
    await p.request({ method: 'GET', url: '/probe/commerce', key: k.key });
    // A 403 (service not granted) is not a request of that service.
    expect((await p.request({ method: 'GET', url: '/probe/llm', key: k.key })).statusCode).toBe(403);

    const res = await usage(`?keyId=${k.id}&from=2026-05-01&to=2026-06-30`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.from).toBe('2026-05-01');
    expect(body.to).toBe('2026-06-30');
    expect(body.data).toEqual([
      { keyId: k.id, day: '2026-05-31', service: 'commerce', requests: 1, rejected: 1 },
      { keyId: k.id, day: '2026-05-31', service: 'core', requests: 1, rejected: 0 },
      { keyId: k.id, day: '2026-05-31', service: 'game', requests: 1, rejected: 0 },
      { keyId: k.id, day: '2026-06-01', service: 'commerce', requests: 2, rejected: 0 },
    ]);
    expect(body.totals).toEqual({ requests: 5, rejected: 1, promptTokens: 0, completionTokens: 0 });

    const oneDay = (await usage(`?keyId=${k.id}&from=2026-06-01&to=2026-06-01`)).json();
    expect(oneDay.data).toEqual([
      { keyId: k.id, day: '2026-06-01', service: 'commerce', requests: 2, rejected: 0 },
    ]);
    // Default range ends today.
    const byDefault = (await usage(`?keyId=${k.id}`)).json();
    expect(byDefault.to).toBe('2026-06-01');
    expect(byDefault.totals).toEqual({ requests: 5, rejected: 1, promptTokens: 0, completionTokens: 0 });
  });

  it('is scoped to the caller’s account: another account’s key id is a 404', async () => {
    const theirs = await usage(`?keyId=${other.id}`);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().code).toBe('API_KEY_NOT_FOUND');
    const mine = await p.createKey({ name: 'mine', type: 'development', services: ['core'], role: 'Admin' });
    await p.request({ method: 'GET', url: '/v1/usage', key: mine.key });
    expect((await usage(`?keyId=${mine.id}`, other.key)).statusCode).toBe(404);
    // The other account sees its own requests only.
    const own = (await usage('', other.key)).json();
    expect(own.data.length).toBeGreaterThan(0);
    expect(own.data.every((r: { keyId: string }) => r.keyId === other.id)).toBe(true);
    // And this account never sees the other account's key.
    const all = (await usage('?from=2026-01-01&to=2026-12-31')).json();
    expect(all.data.some((r: { keyId: string }) => r.keyId === other.id)).toBe(false);
  });

  it('Reader keys of the account may read; keys without the core service may not', async () => {
    const reader = await p.createKey({ name: 'r', type: 'development', services: ['core'], role: 'Reader' });
    expect((await usage('', reader.key)).statusCode).toBe(200);
    const commerceOnly = await p.createKey({
      name: 'c',
      type: 'development',
      services: ['commerce'],
      role: 'Admin',
    });
    expect((await usage('', commerceOnly.key)).statusCode).toBe(403);
  });

  it('bad ranges and parameters are 400', async () => {
    for (const query of [
      '?from=2026-06-02&to=2026-06-01',
      '?from=2024-01-01&to=2026-01-01',
      '?from=not-a-date',
      '?to=2026-13-45',
      '?keyId=x&extra=1',
    ]) {
      const res = await usage(query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });
});
