import { afterEach, describe, expect, it } from 'vitest';
import { authModule, BootstrapError } from '../../src/modules/auth/index.js';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { healthModule } from '../../src/modules/health/index.js';
import { testDialects } from '../helpers/services.js';
import { probeModule } from './support/probe-module.js';
import { SharedDatabase } from './support/shared-db.js';

const dialects = await testDialects();
const modules = [authModule, healthModule, probeModule];

let shared: SharedDatabase | null = null;
afterEach(async () => {
  await shared?.close();
  shared = null;
});

const counts = async (s: SharedDatabase) => {
  const { db } = await s.open();
  const accounts = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const keys = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { accounts: Number(accounts.n), keys: Number(keys.n) };
};

describe.each(dialects)('first start on %s', (dialect) => {
  it('creates an owner and one production Admin key for all services; a second start creates nothing', async () => {
    shared = new SharedDatabase(dialect);
    const first = await shared.app({ PLATFORM_OWNER_EMAIL: 'boss@example.test' }, { modules });
    const boot = await first.ctx.apis.auth!.bootstrap();
    expect(boot.createdKey).toMatch(/^PROD_API_[0-9A-Za-z]{38}$/);
    const key = boot.createdKey!;
    const auth = { authorization: `Bearer ${key}` };
    const list = (await first.app.inject({ method: 'GET', url: '/v1/api-keys', headers: auth })).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      type: 'production',
      role: 'Admin',
      services: ['*'],
      status: 'active',
      last4: key.slice(-4),
    });
    for (const url of ['/probe/commerce', '/probe/game', '/probe/llm']) {
      expect((await first.app.inject({ method: 'GET', url, headers: auth })).json().accountId).toBe(
        boot.accountId,
      );
    }
    const owner = await (await shared.open()).db.selectFrom('accounts').selectAll().executeTakeFirstOrThrow();
    expect(owner).toMatchObject({ id: boot.accountId, email: 'boss@example.test' });

    // Again in the same process, and in a second process on the same database.
    expect(await first.ctx.apis.auth!.bootstrap()).toEqual({ accountId: boot.accountId, createdKey: null });
    const second = await shared.app({}, { modules });
    expect(await second.ctx.apis.auth!.bootstrap()).toEqual({ accountId: boot.accountId, createdKey: null });
    expect(await counts(shared)).toEqual({ accounts: 1, keys: 1 });
  });

  it('two processes starting at once bootstrap exactly one owner and one key', async () => {
    shared = new SharedDatabase(dialect);
    const a = await shared.app({}, { modules });
    const b = await shared.app({}, { modules });
    const results = await Promise.all([a.ctx.apis.auth!.bootstrap(), b.ctx.apis.auth!.bootstrap()]);
    expect(results.filter((r) => r.createdKey !== null)).toHaveLength(1);
    expect(results[0]!.accountId).toBe(results[1]!.accountId);
    expect(await counts(shared)).toEqual({ accounts: 1, keys: 1 });
  });

  it('PLATFORM_BOOTSTRAP_KEY registers that value instead (never printed back)', async () => {
    shared = new SharedDatabase(dialect);
    const preset = generateKey('production');
    const p = await shared.app({ PLATFORM_BOOTSTRAP_KEY: preset }, { modules });
    const boot = await p.ctx.apis.auth!.bootstrap();
    expect(boot.createdKey).toBeNull();
    const res = await p.app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: { authorization: `Bearer ${preset}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      expect.objectContaining({
        type: 'production',
        role: 'Admin',
        services: ['*'],
        last4: preset.slice(-4),
      }),
    ]);
    expect(res.body).not.toContain(preset);
    const other = generateKey('production');
    expect(
      (
        await p.app.inject({
          method: 'GET',
          url: '/v1/api-keys',
          headers: { authorization: `Bearer ${other}` },
        })
      ).statusCode,
    ).toBe(401);
  });

  it('a malformed PLATFORM_BOOTSTRAP_KEY is a BootstrapError and creates nothing', async () => {
    const good = generateKey('production');
    const flipped = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    for (const bad of [flipped, 'PROD_API_short', 'not-a-key', `${good}x`]) {
      shared = new SharedDatabase(dialect);
      const p = await shared.app({ PLATFORM_BOOTSTRAP_KEY: bad }, { modules });
      await expect(p.ctx.apis.auth!.bootstrap()).rejects.toBeInstanceOf(BootstrapError);
      await expect(p.ctx.apis.auth!.bootstrap()).rejects.toThrow(/PLATFORM_BOOTSTRAP_KEY/);
      expect(await counts(shared)).toEqual({ accounts: 0, keys: 0 });
      await shared.close();
      shared = null;
    }
  });
});
