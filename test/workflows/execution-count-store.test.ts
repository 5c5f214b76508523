import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DbExecutionCountStore,
  type ExecutionCountStore,
  RedisExecutionCountStore,
} from '../../src/modules/workflows/executions/count-store.js';
import { type TestPlatform, testRedis } from '../helpers/platform.js';
import { redisAvailable, testDialects, uniqueName } from '../helpers/services.js';
import { workflowPlatform } from './support.js';

/** The daily execution quota's counters: exactly `limit` takes succeed, however many arrive at once. */
const hasRedis = await redisAvailable();
const stores: Array<{ label: string; dialect: 'sqlite' | 'postgres'; redis: boolean }> = (
  await testDialects()
).map((dialect) => ({ label: `database (${dialect})`, dialect, redis: false }));
if (hasRedis) stores.push({ label: 'Redis', dialect: 'sqlite', redis: true });

describe.each(stores)('execution counters on $label', ({ dialect, redis }) => {
  let p: TestPlatform;
  let store: ExecutionCountStore;
  const client = redis ? testRedis() : null;
  const prefix = `${uniqueName('ec')}:`;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    store = client ? new RedisExecutionCountStore(client, prefix) : new DbExecutionCountStore(p.ctx.db);
  });
  afterAll(async () => {
    if (client) {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    }
    await p.close();
  });

  it('counts up to the limit and then refuses, per account and day', async () => {
    expect(await store.take('acct_a', '2026-03-10', 2)).toBe(1);
    expect(await store.take('acct_a', '2026-03-10', 2)).toBe(2);
    expect(await store.take('acct_a', '2026-03-10', 2)).toBeNull();
    expect(await store.read('acct_a', '2026-03-10')).toBe(2);
    expect(await store.take('acct_b', '2026-03-10', 2)).toBe(1);
    expect(await store.take('acct_a', '2026-03-11', 2)).toBe(1);
  });

  it('lets exactly the limit through when starts arrive at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, () => store.take('acct_c', '2026-03-10', 7)),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(7);
    expect(await store.read('acct_c', '2026-03-10')).toBe(7);
  });

  // Redis keys expire on their own (two days); database rows are pruned.
  if (!redis)
    it('prunes the days before a given one', async () => {
      await store.take('acct_d', '2026-01-01', 5);
      await store.prune?.('2026-03-10');
      expect(await store.read('acct_d', '2026-01-01')).toBe(0);
      expect(await store.read('acct_a', '2026-03-10')).toBe(2);
    });
});
