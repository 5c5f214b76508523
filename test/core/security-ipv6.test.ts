import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

/** Audit item 18: IPv4-mapped rules match, and per-IP limits count an IPv6 client by its /64. */
describe.each(dialects)('IPv6 clients on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { RATE_LIMIT_PER_IP: '3', AUTH_FAILURES_PER_IP: '2' } });
  });
  afterAll(async () => {
    await p.close();
  });

  const call = (key: string, remoteAddress: string) =>
    p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key, remoteAddress });

  it('an allowed-IP rule ::ffff:a.b.c.d matches the client a.b.c.d, and the other way round', async () => {
    const mapped = await p.createKey({
      name: 'mapped rule',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['::ffff:203.0.113.7', '::ffff:198.51.100.0/120'],
    });
    expect((await call(mapped.key, '203.0.113.7')).statusCode).toBe(200);
    expect((await call(mapped.key, '198.51.100.42')).statusCode).toBe(200);
    expect((await call(mapped.key, '203.0.113.8')).statusCode).toBe(403);
    const plain = await p.createKey({
      name: 'plain rule',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['203.0.113.9'],
    });
    expect((await call(plain.key, '::ffff:203.0.113.9')).statusCode).toBe(200);
    expect((await call(plain.key, '::ffff:203.0.113.10')).statusCode).toBe(403);
  });

  it('per-IP limits count every address of one /64 as one client', async () => {
    const codes: number[] = [];
    for (const host of ['1', '2', 'abcd:1', 'ffff:ffff:fff0'])
      codes.push((await call(p.adminKey, `2001:db8:aa:1::${host}`)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    // The next /64 is another client.
    expect((await call(p.adminKey, '2001:db8:aa:2::1')).statusCode).toBe(200);
  });

  it('failed authentications are counted per /64 too', async () => {
    const bad = 'DEV_API_0000000000000000000000000000000000000';
    const codes: number[] = [];
    for (const host of ['1', '2', '3']) codes.push((await call(bad, `2001:db8:bb:1::${host}`)).statusCode);
    expect(codes).toEqual([401, 401, 429]);
  });
});
