import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allModules } from '../../src/modules/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { probeModule } from './support/probe-module.js';

// Finding 13: a client that never finishes its request (slow loris) must not hold a connection.
// Small bounds here; the defaults are 10 s for headers and 30 s for the whole request.
const HEADERS_MS = 400;
const REQUEST_MS = 1_000;
// Node checks the clocks every quarter of the header bound; the rest is scheduling slack.
const SLACK_MS = 800;

let p: TestPlatform;
let port: number;
beforeAll(async () => {
  p = await createTestPlatform({
    dialect: 'sqlite',
    modules: [...allModules, probeModule],
    env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS) },
  });
  await p.app.listen({ port: 0, host: '127.0.0.1' });
  port = (p.app.server.address() as { port: number }).port;
});
afterAll(() => p.close());

interface Outcome {
  /** Milliseconds from connect to the server closing the socket. */
  closedAfter: number;
  received: string;
}

/**
 * Opens a socket, writes `head`, then `drip` one byte at a time every 100 ms, as a slow-loris
 * client does; resolves when the server closes the socket, or after `giveUpMs` (then destroys it).
 */
function slowClient(head: string, drip: string, giveUpMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const socket: Socket = connect(port, '127.0.0.1', () => {
      if (head) socket.write(head);
      let i = 0;
      timer = setInterval(() => {
        if (i < drip.length && socket.writable) socket.write(drip[i++] as string);
      }, 100);
    });
    const giveUp = setTimeout(() => socket.destroy(), giveUpMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedAfter: Date.now() - started, received });
    });
  });
}

function expectTimeoutAnswer(received: string) {
  const [head = '', body = ''] = received.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 400 /);
  expect(head.toLowerCase()).toContain('connection: close');
  expect(JSON.parse(body)).toMatchObject({
    error: true,
    code: 'VALIDATION_ERROR',
    message: 'The request did not arrive in time',
    requestId: expect.stringMatching(/^req_/),
  });
}

describe('slow clients are cut off (slow loris)', () => {
  it('a body dripped slowly to /webhook-waiting is cut off at the request bound', async () => {
    const head =
      'POST /webhook-waiting/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      'Content-Length: 1000\r\n\r\n';
    const outcome = await slowClient(head, `{"a":"${'b'.repeat(200)}`, REQUEST_MS + 5_000);
    expect(outcome.closedAfter).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(outcome.closedAfter).toBeLessThan(REQUEST_MS + SLACK_MS);
    // The resume may be refused before its body is read (no resume token); whatever was answered
    // is in the error shape, and the socket did not outlive the bound.
    const last = outcome.received.slice(outcome.received.lastIndexOf('HTTP/1.1 '));
    expect(JSON.parse(last.split('\r\n\r\n')[1] ?? '')).toMatchObject({
      error: true,
      requestId: expect.any(String),
    });
  });

  it('a body dripped slowly to a route that reads it → 400 in the error shape at the request bound', async () => {
    const head =
      `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.adminKey}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const outcome = await slowClient(head, `{"name":"${'b'.repeat(200)}`, REQUEST_MS + 5_000);
    expect(outcome.closedAfter).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(outcome.closedAfter).toBeLessThan(REQUEST_MS + SLACK_MS);
    expectTimeoutAnswer(outcome.received);
  });

  it('headers dripped slowly are cut off at the header bound', async () => {
    const outcome = await slowClient(
      'POST /webhook-waiting/x HTTP/1.1\r\n',
      `Host: x\r\nX-Slow: ${'s'.repeat(100)}`,
      HEADERS_MS + 5_000,
    );
    expect(outcome.closedAfter).toBeLessThan(HEADERS_MS + SLACK_MS);
    expectTimeoutAnswer(outcome.received);
  });

  it('a connection that sends nothing is closed at the header bound', async () => {
    const outcome = await slowClient('', '', HEADERS_MS + 5_000);
    expect(outcome.closedAfter).toBeLessThan(HEADERS_MS + SLACK_MS);
  });

  it('the bound counts the request, not the handler: a slow answer still arrives', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/probe/slow?ms=${REQUEST_MS + 500}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ slow: true });
  });

  it('a request sent at a normal pace is served', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/webhook-waiting/x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBeLessThan(500);
    expect(await res.json()).toMatchObject({ error: true, requestId: expect.any(String) });
  });
});
