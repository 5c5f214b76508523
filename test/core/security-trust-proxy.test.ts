import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { createAuthHook } from '../../src/core/http/auth-hook.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

let open: TestPlatform[] = [];
afterEach(async () => {
  await Promise.all(open.map((p) => p.close()));
  open = [];
});

async function platform(env: Record<string, string>): Promise<TestPlatform> {
  const p = await createTestPlatform({ dialect: 'sqlite', env });
  open.push(p);
  return p;
}

/** A key that works only from 203.0.113.0/24, and a call through a proxy at 10.0.0.1. */
async function restricted(p: TestPlatform) {
  const k = await p.createKey({
    name: 'office',
    type: 'development',
    services: ['core'],
    role: 'Admin',
    allowedIps: ['203.0.113.0/24'],
  });
  return (forwardedFor: string, remoteAddress = '10.0.0.1') =>
    p.request({
      method: 'GET',
      url: '/v1/api-keys?limit=1',
      key: k.key,
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    });
}

/** Audit item 9: X-Forwarded-For is believed only as far as the configured proxies. */
describe('TRUST_PROXY', () => {
  it('a hop count of 1: a spoofed left-most X-Forwarded-For does not pass an IP-restricted key', async () => {
    const call = await restricted(await platform({ TRUST_PROXY: '1' }));
    // The client wrote 203.0.113.9; the proxy appended the address it saw, 198.51.100.7.
    const spoofed = await call('203.0.113.9, 198.51.100.7');
    expect(spoofed.statusCode).toBe(403);
    expect(spoofed.json().details.ip).toBe('198.51.100.7');
    expect((await call('198.51.100.7, 203.0.113.9')).statusCode).toBe(200);
    expect((await call('203.0.113.9')).statusCode).toBe(200);
  });

  it('`true` means one hop, not every hop', async () => {
    const call = await restricted(await platform({ TRUST_PROXY: 'true' }));
    expect((await call('203.0.113.9, 198.51.100.7')).statusCode).toBe(403);
    expect((await call('198.51.100.7, 203.0.113.9')).statusCode).toBe(200);
  });

  it('a list of proxy CIDRs: only those peers are believed, and only as far as they chain', async () => {
    const call = await restricted(await platform({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.1' }));
    expect((await call('203.0.113.9')).statusCode).toBe(200);
    expect((await call('203.0.113.9', '192.168.1.1')).statusCode).toBe(200);
    // A client at an untrusted address cannot name itself through the header.
    expect((await call('203.0.113.9', '198.51.100.7')).statusCode).toBe(403);
    // The proxy is trusted, the address it received the request from is not.
    expect((await call('203.0.113.9, 198.51.100.7')).statusCode).toBe(403);
    // Two trusted proxies in a row.
    expect((await call('203.0.113.9, 10.1.2.3')).statusCode).toBe(200);
  });

  it('off (the default): X-Forwarded-For is ignored', async () => {
    const call = await restricted(await platform({}));
    expect((await call('203.0.113.9')).statusCode).toBe(403);
    expect((await call('198.51.100.7', '203.0.113.5')).statusCode).toBe(200);
  });

  it('per-IP limits count the real client, whatever it writes in the header', async () => {
    const p = await platform({ TRUST_PROXY: '1', RATE_LIMIT_PER_IP: '3' });
    const call = (forwardedFor: string) =>
      p.request({
        method: 'GET',
        url: '/v1/api-keys?limit=1',
        remoteAddress: '10.0.0.1',
        headers: { 'x-forwarded-for': forwardedFor },
      });
    // Each request claims another client on the left; the proxy saw the same one.
    const codes: number[] = [];
    for (let i = 1; i <= 4; i++) codes.push((await call(`192.0.2.${i}, 198.51.100.99`)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    // Another client behind the same proxy is not affected.
    expect((await call('198.51.100.100')).statusCode).toBe(200);
  });

  it('anything else is refused at start', async () => {
    for (const bad of ['yes', '10.0.0.0/33', '1.2.3', 'example.com', '-1', ',']) {
      await expect(platform({ TRUST_PROXY: bad }), bad).rejects.toBeInstanceOf(ConfigError);
    }
  });

  it('warns once when a private peer sends X-Forwarded-For that is not trusted', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const p = await platform({});
    const app = Fastify({ logger: { level: 'warn', stream } });
    const auth = p.ctx.apis.auth;
    if (!auth) throw new Error('auth module missing');
    app.addHook(
      'onRequest',
      createAuthHook({
        authenticator: auth.authenticator,
        usage: auth.usage,
        limiter: p.ctx.limiter,
        limits: { windowSeconds: 60, perIp: 0, perEndpoint: 0, authFailuresPerIp: 0 },
      }),
    );
    app.get('/ping', { config: { public: true } }, async () => ({ ok: true }));
    const get = (remoteAddress: string, xff?: string) =>
      app.inject({
        method: 'GET',
        url: '/ping',
        remoteAddress,
        headers: xff ? { 'x-forwarded-for': xff } : {},
      });
    try {
      // A public peer's header, or a private peer without one, says nothing about a proxy.
      await get('198.51.100.7', '203.0.113.9');
      await get('10.0.0.5');
      expect(lines).toHaveLength(0);
      await get('10.0.0.5', '203.0.113.9');
      await get('10.0.0.5', '203.0.113.10');
      await get('192.168.0.2', '203.0.113.11');
      const warnings = lines.filter((l) => /X-Forwarded-For/.test(l.msg));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe(40);
      expect(warnings[0]?.msg).toMatch(/TRUST_PROXY/);
    } finally {
      await app.close();
    }
  });
});
