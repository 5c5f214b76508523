import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { REDIS_URL, testDialects, uniqueName } from '../helpers/services.js';
import { runNode } from './db-support.js';
import { createCredential, workflowPlatform } from './support.js';

// The test Redis; every key under a prefix of this run's own.
const admin = new Redis(REDIS_URL);
afterAll(() => admin.quit());

describe.each(await testDialects())("n8n's Redis node against Redis, platform on %s", (dialect) => {
  let p: TestPlatform;
  let cred = '';
  const prefix = `${uniqueName(`n8n_redis_${dialect}`)}:`;
  const node = (parameters: Record<string, unknown>) => ({
    type: 'redis',
    typeVersion: 1,
    parameters,
    credentials: { redis: { id: cred, name: 'redis' } },
  });

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    cred = await createCredential(p, 'redis', 'redis', { host: '127.0.0.1', port: '6379', database: '0' });
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await p.close();
  });

  it('sets (string, hash, list with TTL) and gets by the key type', async () => {
    const set = await runNode(
      p,
      node({ operation: 'set', key: '={{ $json.k }}', value: '={{ $json.v }}', keyType: 'automatic' }),
      [
        { k: `${prefix}s`, v: 'hello' },
        { k: `${prefix}h`, v: { a: 1, b: 'two' } },
        { k: `${prefix}l`, v: [1, 2] },
      ],
    );
    expect(set.error).toBeUndefined();
    expect(await admin.get(`${prefix}s`)).toBe('hello');
    expect(await admin.hgetall(`${prefix}h`)).toEqual({ a: '1', b: 'two' });
    expect(await admin.lrange(`${prefix}l`, 0, -1)).toEqual(['1', '2']);
    await runNode(p, node({ operation: 'set', key: `${prefix}t`, value: 'x', expire: true, ttl: 100 }));
    expect(await admin.ttl(`${prefix}t`)).toBeGreaterThan(90);
    const got = await runNode(
      p,
      node({ operation: 'get', key: '={{ $json.k }}', propertyName: 'out.value', keyType: 'automatic' }),
      [{ k: `${prefix}s` }, { k: `${prefix}h` }, { k: `${prefix}l` }, { k: `${prefix}missing` }],
    );
    expect(got.out).toEqual([
      { out: { value: 'hello' } },
      { out: { value: { a: '1', b: 'two' } } },
      { out: { value: ['1', '2'] } },
      { out: { value: null } },
    ]);
  });

  it('increments with an expiry, lists keys by pattern (with values or not), deletes', async () => {
    const incr = await runNode(p, node({ operation: 'incr', key: `${prefix}n`, expire: true, ttl: 50 }), [
      {},
      {},
    ]);
    expect(incr.out).toEqual([{ [`${prefix}n`]: 1 }, { [`${prefix}n`]: 2 }]);
    const keys = await runNode(p, node({ operation: 'keys', keyPattern: `${prefix}s*`, getValues: true }));
    expect(keys.out).toEqual([{ [`${prefix}s`]: 'hello' }]);
    const names = await runNode(p, node({ operation: 'keys', keyPattern: `${prefix}*`, getValues: false }));
    expect(((names.out[0]?.keys ?? []) as string[]).sort()).toEqual(
      ['h', 'l', 'n', 's', 't'].map((k) => `${prefix}${k}`),
    );
    const bounded = await runNode(
      p,
      node({ operation: 'keys', keyPattern: `${prefix}*`, getValues: false, options: { maxRows: 2 } }),
    );
    expect(bounded.error).toBe('The query returned more than 2 rows');
    await runNode(p, node({ operation: 'delete', key: `${prefix}t` }));
    expect(await admin.exists(`${prefix}t`)).toBe(0);
  });

  it('pushes and pops (head and tail, JSON parsed), publishes to a channel', async () => {
    await runNode(
      p,
      node({ operation: 'push', list: `${prefix}q`, messageData: '={{ $json.m }}', tail: true }),
      [{ m: '{"n":1}' }, { m: 'plain' }],
    );
    expect(await admin.lrange(`${prefix}q`, 0, -1)).toEqual(['{"n":1}', 'plain']);
    const head = await runNode(p, node({ operation: 'pop', list: `${prefix}q`, propertyName: 'v' }));
    const tail = await runNode(
      p,
      node({ operation: 'pop', list: `${prefix}q`, tail: true, propertyName: 'v' }),
    );
    expect([head.out, tail.out]).toEqual([[{ v: { n: 1 } }], [{ v: 'plain' }]]);

    const sub = new Redis(REDIS_URL);
    const channel = `${prefix}chan`;
    const got = new Promise<string>((resolve) => sub.on('message', (_c, m) => resolve(m)));
    await sub.subscribe(channel);
    const pub = await runNode(p, node({ operation: 'publish', channel, messageData: 'ping' }), [{ a: 1 }]);
    expect(pub.out).toEqual([{ a: 1 }]);
    expect(await got).toBe('ping');
    await sub.quit();
  });

  it('answers INFO as an object', async () => {
    const info = await runNode(p, node({ operation: 'info' }));
    expect(info.out).toHaveLength(1);
    expect(typeof info.out[0]?.redis_version).toBe('string');
    expect(typeof info.out[0]?.connected_clients).toBe('number');
  });
});
