import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

// Errors raised before a route runs — by the router or by Node's HTTP parser — still answer in
// the platform's error shape with a request id. Parser errors need a real socket.
let p: TestPlatform;
let port: number;
beforeAll(async () => {
  p = await createTestPlatform({ dialect: 'sqlite' });
  await p.app.listen({ port: 0, host: '127.0.0.1' });
  port = (p.app.server.address() as { port: number }).port;
});
afterAll(() => p.close());

/** Sends raw bytes; resolves with the status, headers and parsed body of the last response. */
function raw(bytes: string): Promise<{ status: number; headers: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const last = data.slice(data.lastIndexOf('HTTP/1.1 '));
      const [head = '', body = ''] = last.split('\r\n\r\n');
      try {
        resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) });
      } catch (error) {
        reject(new Error(`unparseable response: ${data}`, { cause: error }));
      }
    });
  });
}

function expectShape(body: Record<string, unknown>, code: string) {
  expect(body).toMatchObject({ error: true, code, details: expect.any(Object) });
  expect(body.requestId).toMatch(/^req_[0-9a-f]{32}$/);
}

describe('errors before a route runs', () => {
  it('a path that is not valid percent-encoding → 400 in the error shape, with X-Request-Id', async () => {
    for (const url of ['/v1/api-keys/%E0%A4%A', '/health/%zz']) {
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expectShape(res.json(), 'VALIDATION_ERROR');
      expect(res.headers['x-request-id']).toBe(res.json().requestId);
    }
  });

  it('an over-long path parameter → 400 that does not echo the path', async () => {
    const long = 'a'.repeat(150);
    const res = await p.request({ method: 'GET', url: `/v1/api-keys/${long}` });
    expect(res.statusCode).toBe(400);
    expectShape(res.json(), 'VALIDATION_ERROR');
    expect(res.body).not.toContain(long);
    expect(res.headers['x-request-id']).toBe(res.json().requestId);
  });

  it('a body longer than its Content-Length → 400 in the error shape, connection closed', async () => {
    // The first 5 bytes are the request (a malformed JSON 400); the rest cannot be parsed as HTTP.
    const res = await raw(
      `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.adminKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{"name":"aaaaaaa"}',
    );
    expect(res.status).toBe(400);
    expectShape(res.body, 'VALIDATION_ERROR');
    expect(res.headers).toContain('connection: close');
    expect(res.headers).toContain(`x-request-id: ${String(res.body.requestId).toLowerCase()}`);
  });

  it('oversized headers and garbage framing → 400 in the error shape', async () => {
    const big = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(400);
    expectShape(big.body, 'VALIDATION_ERROR');
    expect(big.body.message).toMatch(/headers/i);
    const garbage = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expectShape(garbage.body, 'VALIDATION_ERROR');
  });
});
