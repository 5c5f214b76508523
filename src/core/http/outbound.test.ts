import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOutboundHttp,
  isBlockedAddress,
  OutboundBlockedError,
  OutboundTimeoutError,
} from './outbound.js';

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hello') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }));
      });
      return;
    }
    if (req.url === '/to-hello') {
      res.writeHead(302, { location: '/hello' }).end();
      return;
    }
    if (req.url === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    if (req.url === '/to-private') {
      res.writeHead(307, { location: 'http://10.0.0.1/' }).end();
      return;
    }
    if (req.url === '/loop') {
      res.writeHead(302, { location: '/loop' }).end();
      return;
    }
    if (req.url === '/big') {
      // Headers first, then a body in pieces: the limit trips mid-stream, not on Content-Length.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(3000));
      setTimeout(() => res.end('y'.repeat(3000)), 20);
      return;
    }
    if (req.url === '/big-at-once') {
      res.end('z'.repeat(5000));
      return;
    }
    if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 2_000);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const req = (url: string, over: Partial<{ method: string; body: string; timeoutMs: number }> = {}) => ({
  method: 'GET',
  url,
  headers: {},
  timeoutMs: 5_000,
  ...over,
});

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-ip',
  ])('blocks %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])('allows public %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('createOutboundHttp', () => {
  const blocked = createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 });

  it.each([
    'http://127.0.0.1:1/',
    'http://10.0.0.1/',
    'http://[::1]:1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://localhost:1/',
    'http://[::ffff:127.0.0.1]:1/',
  ])('refuses %s before connecting', async (url) => {
    await expect(blocked(req(url))).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('a response over maxResponseBytes rejects (no cut body resolved, no uncaught error)', async () => {
    const small = createOutboundHttp({
      allowHosts: [`127.0.0.1:${port}`],
      timeoutMs: 5_000,
      maxResponseBytes: 1_000,
    });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      await expect(small(req(`http://127.0.0.1:${port}/big`))).rejects.toThrow(/larger than 1000 bytes/);
      await expect(small(req(`http://127.0.0.1:${port}/big-at-once`))).rejects.toThrow(
        /larger than 1000 bytes/,
      );
      // An uncaught error would come from the cut stream after the rejection; nothing observable
      // marks "no error is coming", so a short pause: on a slow machine it can miss one, never fail.
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  });

  it('refuses non-http protocols', async () => {
    await expect(blocked(req('file:///etc/passwd'))).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('reaches an allowed local host (host:port) and returns status, headers and body', async () => {
    const http = createOutboundHttp({ allowHosts: [`127.0.0.1:${port}`], timeoutMs: 5_000 });
    const res = await http(req(`http://127.0.0.1:${port}/hello`, { method: 'POST', body: 'hi' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body)).toEqual({ method: 'POST', body: 'hi', auth: null });
  });

  it('does not allow another port of an allowed host:port', async () => {
    const http = createOutboundHttp({ allowHosts: [`127.0.0.1:${port}`], timeoutMs: 5_000 });
    await expect(http(req(`http://127.0.0.1:${port + 1}/`))).rejects.toBeInstanceOf(OutboundBlockedError);
  });

  it('follows a redirect within the allowed host', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    const res = await http(req(`http://127.0.0.1:${port}/to-hello`));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).method).toBe('GET');
  });

  it('refuses a redirect from an allowed host to the metadata address', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    await expect(http(req(`http://127.0.0.1:${port}/to-metadata`))).rejects.toThrow(/169\.254\.169\.254/);
  });

  it('refuses a redirect from an allowed host to a private address', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    await expect(http(req(`http://127.0.0.1:${port}/to-private`))).rejects.toBeInstanceOf(
      OutboundBlockedError,
    );
  });

  it('drops credential headers (and a declared custom one) on a redirect to another origin', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const other = createServer((r, res) => {
      seen.push({ ...r.headers });
      res.end('{}');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as AddressInfo).port;
    const hop = createServer((r, res) => {
      seen.push({ ...r.headers });
      res.writeHead(307, { location: `http://127.0.0.1:${otherPort}/landed` }).end();
    });
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', r));
    const hopPort = (hop.address() as AddressInfo).port;
    try {
      const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
      const res = await http({
        ...req(`http://127.0.0.1:${hopPort}/start`),
        headers: {
          authorization: 'Bearer s1',
          cookie: 'sid=s2',
          'proxy-authorization': 'Basic s3',
          'X-Shop-Token': 's4',
          'x-trace': 'kept',
        },
        credentialHeaders: ['X-Shop-Token'],
      });
      expect(res.status).toBe(200);
      expect(seen[0]).toMatchObject({ authorization: 'Bearer s1', 'x-shop-token': 's4' });
      const landed = seen[1] ?? {};
      for (const name of ['authorization', 'cookie', 'proxy-authorization', 'x-shop-token']) {
        expect(landed[name]).toBeUndefined();
      }
      expect(landed['x-trace']).toBe('kept');
    } finally {
      other.closeAllConnections();
      hop.closeAllConnections();
      await Promise.all([new Promise((r) => other.close(r)), new Promise((r) => hop.close(r))]);
    }
  });

  it('a refusal names the host but never what it resolves to', async () => {
    const error = await blocked(req('http://localhost:1/')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect((error as Error).message).toMatch(/'localhost' is not allowed/);
    expect((error as Error).message).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('stops after 5 redirects', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    await expect(http(req(`http://127.0.0.1:${port}/loop`))).rejects.toThrow(/More than 5 redirects/);
  });

  it('enforces the time limit', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    const t0 = Date.now();
    await expect(http(req(`http://127.0.0.1:${port}/slow`, { timeoutMs: 200 }))).rejects.toBeInstanceOf(
      OutboundTimeoutError,
    );
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('caps a request time limit at the configured one', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 150 });
    await expect(http(req(`http://127.0.0.1:${port}/slow`, { timeoutMs: 60_000 }))).rejects.toBeInstanceOf(
      OutboundTimeoutError,
    );
  });
});
