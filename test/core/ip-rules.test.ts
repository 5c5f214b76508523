import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

describe.each(dialects)('allowedIps on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  const call = (key: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    p.request({ method: 'GET', url: '/v1/api-keys?limit=1', key, remoteAddress, headers });

  it('every malformed rule is named in one 400, including ambiguous IPv4 spellings', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload: {
        name: 'bad-ips',
        type: 'development',
        services: ['core'],
        role: 'Reader',
        allowedIps: ['10.0.0.0/33', 'example.com', '010.0.0.1', '10.1', '2001:db8::/32'],
      },
    });
    expect(res.statusCode).toBe(400);
    const messages = res.json().details.fields.map((f: { message: string }) => f.message);
    expect(messages).toHaveLength(4);
    for (const bad of ['10.0.0.0/33', 'example.com', '010.0.0.1', '10.1']) {
      expect(messages).toContain(`'${bad}' is not an IP address or CIDR`);
    }
  });

  it('PATCH allowedIps applies to the next request; an empty list allows any address', async () => {
    const k = await p.createKey({
      name: 'moving',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['198.51.100.0/24'],
    });
    expect((await call(k.key, '198.51.100.20')).statusCode).toBe(200);
    const outside = await call(k.key, '203.0.113.1');
    expect(outside.statusCode).toBe(403);
    expect(outside.json()).toMatchObject({ code: 'FORBIDDEN', details: { ip: '203.0.113.1' } });
    await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${k.id}`,
      payload: { allowedIps: ['2001:db8::/64'] },
    });
    expect((await call(k.key, '198.51.100.20')).statusCode).toBe(403);
    expect((await call(k.key, '2001:db8::abcd')).statusCode).toBe(200);
    await p.request({ method: 'PATCH', url: `/v1/api-keys/${k.id}`, payload: { allowedIps: [] } });
    expect((await call(k.key, '203.0.113.1')).statusCode).toBe(200);
  });

  it('without TRUST_PROXY, X-Forwarded-For cannot smuggle an allowed address', async () => {
    const k = await p.createKey({
      name: 'xff',
      type: 'development',
      services: ['core'],
      role: 'Admin',
      allowedIps: ['10.0.0.0/8'],
    });
    expect((await call(k.key, '192.0.2.1', { 'x-forwarded-for': '10.0.0.1' })).statusCode).toBe(403);
    expect((await call(k.key, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).statusCode).toBe(200);
  });
});

describe('allowedIps behind a trusted proxy', () => {
  it('TRUST_PROXY=true takes the client from X-Forwarded-For, not the proxy socket', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', env: { TRUST_PROXY: 'true' } });
    try {
      const k = await p.createKey({
        name: 'proxied',
        type: 'development',
        services: ['core'],
        role: 'Admin',
        allowedIps: ['2001:db8::/32', '203.0.113.7'],
      });
      const call = (xff: string) =>
        p.request({
          method: 'GET',
          url: '/v1/api-keys?limit=1',
          key: k.key,
          remoteAddress: '10.0.0.1',
          headers: { 'x-forwarded-for': xff },
        });
      expect((await call('203.0.113.7')).statusCode).toBe(200);
      expect((await call('2001:db8::5')).statusCode).toBe(200);
      expect((await call('203.0.113.8')).statusCode).toBe(403);
      // The proxy's own address is not the client.
      const direct = await p.request({
        method: 'GET',
        url: '/v1/api-keys?limit=1',
        key: k.key,
        remoteAddress: '203.0.113.7',
      });
      expect(direct.statusCode).toBe(200);
    } finally {
      await p.close();
    }
  });
});
