import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { Platform } from '../../src/app.js';
import { redisAvailable, testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { SharedDatabase } from './support/shared-db.js';

const dialects = await testDialects();
const redisUp = await redisAvailable();

let shared: SharedDatabase | null = null;
afterEach(async () => {
  await shared?.close();
  shared = null;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const use = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${key}` } });

async function twoProcesses(dialect: (typeof dialects)[number], env: Record<string, string>, redis = false) {
  shared = new SharedDatabase(dialect);
  const a = await shared.app(env, { redis });
  const b = await shared.app(env, { redis });
  const boot = await a.ctx.apis.auth!.bootstrap();
  expect(boot.createdKey).not.toBeNull();
  expect((await b.ctx.apis.auth!.bootstrap()).createdKey).toBeNull();
  const created = await a.ctx.apis.auth!.keys.create(
    boot.accountId,
    { name: 'shared', type: 'development', services: ['core'], role: 'Reader' },
    null,
  );
  return { a, b, accountId: boot.accountId, key: created.key, id: created.id };
}

async function revokeIn(p: Platform, accountId: string, id: string) {
  await p.ctx.apis.auth!.keys.revoke(accountId, id);
}

describe.each(dialects)('key verification cache across processes on %s', (dialect) => {
  it('revocation is immediate in its own process and bounded by KEY_CACHE_TTL_SECONDS in another', async () => {
    const { a, b, accountId, key, id } = await twoProcesses(dialect, { KEY_CACHE_TTL_SECONDS: '1' });
    expect((await use(a.app, key)).statusCode).toBe(200);
    expect((await use(b.app, key)).statusCode).toBe(200); // b caches the verified key
    await revokeIn(a, accountId, id);
    const inA = await use(a.app, key);
    expect(inA.statusCode).toBe(401);
    expect(inA.json().message).toMatch(/revoked/);
    // b may keep serving its cached entry, but no longer than the TTL: the TTL's time must pass (a
    // bound on time, so a fixed wait; a loaded machine only makes it longer, never too short).
    await sleep(1_100);
    const inB = await use(b.app, key);
    expect(inB.statusCode).toBe(401);
    expect(inB.json().message).toMatch(/revoked/);
  });

  it('with KEY_CACHE_TTL_SECONDS=0 every process sees a revocation at once', async () => {
    const { a, b, accountId, key, id } = await twoProcesses(dialect, { KEY_CACHE_TTL_SECONDS: '0' });
    expect((await use(b.app, key)).statusCode).toBe(200);
    await revokeIn(a, accountId, id);
    expect((await use(b.app, key)).statusCode).toBe(401);
  });

  it('a rotation in one process retires the old value in the other within the TTL', async () => {
    const { a, b, accountId, key, id } = await twoProcesses(dialect, { KEY_CACHE_TTL_SECONDS: '1' });
    expect((await use(b.app, key)).statusCode).toBe(200);
    const rotated = await a.ctx.apis.auth!.keys.rotate(accountId, id, 0, null);
    expect((await use(a.app, key)).statusCode).toBe(401);
    expect((await use(b.app, rotated.key)).statusCode).toBe(200);
    await sleep(1_100); // the TTL passes (as above)
    expect((await use(b.app, key)).statusCode).toBe(401);
  });
});

describe.skipIf(!redisUp).each(dialects)('key cache invalidation over Redis on %s', (dialect) => {
  it('another process refuses a revoked key without waiting for its TTL', async () => {
    const { a, b, accountId, key, id } = await twoProcesses(dialect, { KEY_CACHE_TTL_SECONDS: '3600' }, true);
    expect((await use(b.app, key)).statusCode).toBe(200);
    await revokeIn(a, accountId, id);
    // Pub/sub delivery is asynchronous: poll, far below the one-hour TTL.
    await until(async () => (await use(b.app, key)).statusCode === 401, 'b to refuse the key', 20_000);
  });

  it('a PATCH in one process (quota) reaches the other at once', async () => {
    const { a, b, accountId, key, id } = await twoProcesses(dialect, { KEY_CACHE_TTL_SECONDS: '3600' }, true);
    expect((await use(b.app, key)).headers['x-ratelimit-limit']).toBe('5000');
    await a.ctx.apis.auth!.keys.update(accountId, id, { dailyQuota: 77 }, null);
    await until(
      async () => (await use(b.app, key)).headers['x-ratelimit-limit'] === '77',
      'the new quota in b',
      20_000,
    );
  });
});
