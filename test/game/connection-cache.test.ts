import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform, testRedis } from '../helpers/platform.js';
import { redisAvailable, testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { connectAccount } from './connect.js';
import { FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();
const withRedis = await redisAvailable();
const modules = [authModule, healthModule, gameModule];
const MEMBERSHIPS = '/game/User/GetMembershipsForCurrentUser';
const PROFILE = '/game/Destiny2/3/Profile/4611686018467000123/?components=100';

describe.skipIf(!withRedis).each(dialects)('game connection cache on %s', (dialect) => {
  const prefix = `gcc-${randomBytes(4).toString('hex')}:`;
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  let redis: Redis;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect, modules, env: fake.env({ REDIS_PREFIX: prefix }), redis: true });
    redis = testRedis();
  });
  afterAll(async () => {
    redis?.disconnect();
    await p?.close();
    await fake?.stop();
  });

  const lastAuthorization = () => fake.apiRequests().at(-1)?.headers.authorization;

  it('a call after connecting carries the token, though the absence was cached a moment before', async () => {
    expect((await p.request({ method: 'GET', url: PROFILE })).statusCode).toBe(200);
    expect(lastAuthorization()).toBeUndefined();
    await connectAccount(p, fake, '9101');
    expect((await p.request({ method: 'GET', url: PROFILE })).statusCode).toBe(200);
    expect(lastAuthorization()).toMatch(/^Bearer /);
  });

  it("serves the connection from memory; another process's change, announced over Redis, drops it at once", async () => {
    const first = await p.request({ method: 'GET', url: MEMBERSHIPS });
    expect(first.statusCode, first.body).toBe(200);
    const token = lastAuthorization();
    // Another process (same database) removes the connection: until it says so, this one
    // answers from memory, without reading the database.
    await p.ctx.db.deleteFrom('game_connections').execute();
    const cached = await p.request({ method: 'GET', url: MEMBERSHIPS });
    expect(cached.statusCode).toBe(200);
    expect(lastAuthorization()).toBe(token);
    // What that process publishes when its connection changes: the owner (account, customer).
    await redis.publish(`${prefix}game:connections:invalidate`, `${p.accountId}\u0000`);
    const refused = await until(async () => {
      const res = await p.request({ method: 'GET', url: MEMBERSHIPS });
      return res.statusCode === 401 ? res : undefined;
    }, 'the cached connection to be dropped');
    expect(refused.json().code).toBe('GAME_AUTH_REQUIRED');
  });
});
