import { request as httpRequest } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { registerErrorHandling } from '../../src/core/http/error-handler.js';
import { registerGracefulClose } from '../../src/core/http/graceful-close.js';
import { sendLines } from '../../src/core/http/stream-reply.js';
import { registerStreamSlots, StreamSlots } from '../../src/core/http/stream-slots.js';
import { until } from '../helpers/until.js';

/** An app whose `/lines` streams what `lines()` makes, with the platform's error handling and slots. */
async function appWith(
  lines: () => AsyncIterable<string>,
  slots = new StreamSlots(10, 100),
  before: (reply: FastifyReply) => Promise<void> = async () => undefined,
) {
  const app = Fastify();
  registerErrorHandling(app);
  registerStreamSlots(app, slots);
  registerGracefulClose(app);
  let responded = 0;
  app.addHook('onResponse', async () => {
    responded++;
  });
  app.get('/lines', async (_request, reply) => {
    reply.header('x-route', 'set before the stream');
    await before(reply);
    return sendLines(reply, 'text/event-stream; charset=utf-8', lines());
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, address, responded: () => responded };
}

let open: FastifyInstance | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

/** Turns of the event loop, none of them a fixed time. */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('streamed answers written straight to the response', () => {
  it('sends every line in order with the route’s status and headers, ends, and runs onResponse', async () => {
    const { app, address, responded } = await appWith(async function* () {
      for (let i = 0; i < 100; i++) yield `data: ${i}\n\n`;
    });
    open = app;
    const res = await fetch(`${address}/lines`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-route')).toBe('set before the stream');
    expect(await res.text()).toBe(Array.from({ length: 100 }, (_, i) => `data: ${i}\n\n`).join(''));
    await until(() => responded() === 1, 'the onResponse hook');
  });

  it('ends at once a stream with no lines', async () => {
    const { app, address } = await appWith(async function* () {
      if (Date.now() < 0) yield 'never';
    });
    open = app;
    const res = await fetch(`${address}/lines`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('stops pulling lines while the client does not read, and cleans up when it goes', async () => {
    let pulled = 0;
    let cleanedUp = false;
    const line = `${'x'.repeat(1023)}\n`;
    const { app, address } = await appWith(async function* () {
      try {
        for (;;) {
          pulled++;
          yield line;
        }
      } finally {
        cleanedUp = true;
      }
    });
    open = app;
    // A client that reads nothing: the socket's buffers fill, then the writes wait for a drain.
    const req = httpRequest(`${address}/lines`);
    const paused = new Promise<import('node:http').IncomingMessage>((resolve) => req.on('response', resolve));
    req.end();
    const res = await paused;
    res.pause();
    let last = -1;
    await until(async () => {
      const now = pulled;
      await turns(50);
      const still = pulled === now && now === last;
      last = pulled;
      return still;
    }, 'the pulls to stop');
    // The kernel's loopback buffers and the socket's own, never the generator run unbounded.
    expect(pulled * line.length).toBeLessThan(64 * 1024 * 1024);
    expect(cleanedUp).toBe(false);
    req.destroy();
    await until(() => cleanedUp, 'the lines’ cleanup');
  });

  it('answers a failure before the first line in the route’s error format, nothing streamed', async () => {
    const { app, address } = await appWith(async function* () {
      if (Date.now() > 0) throw new AppError('UPSTREAM_ERROR', 'the model is down');
      yield 'never';
    });
    open = app;
    const res = await fetch(`${address}/lines`);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('x-accel-buffering')).toBeNull();
    expect(((await res.json()) as { code: string }).code).toBe('UPSTREAM_ERROR');
  });

  it('cuts the response on a failure after the first line; the server goes on', async () => {
    const { app, address } = await appWith(async function* () {
      yield 'data: 1\n\n';
      throw new Error('the model failed');
    });
    open = app;
    // The line written before the failure reaches the client; the response never ends cleanly.
    for (let round = 0; round < 2; round++) {
      const res = await fetch(`${address}/lines`);
      expect(res.status).toBe(200);
      const reader = res.body?.getReader();
      const { value } = (await reader?.read()) ?? {};
      expect(Buffer.from(value ?? []).toString()).toBe('data: 1\n\n');
      await expect(reader?.read()).rejects.toThrow();
    }
  });

  it('refuses a stream past its holder’s slots with a 429, the lines never started', async () => {
    let started = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const { app, address } = await appWith(async function* () {
      started++;
      yield 'data: first\n\n';
      await held;
    }, new StreamSlots(1, 100));
    open = app;
    const first = await fetch(`${address}/lines`);
    expect(first.status).toBe(200);
    const second = await fetch(`${address}/lines`);
    expect(second.status).toBe(429);
    expect(((await second.json()) as { code: string }).code).toBe('RATE_LIMIT_EXCEEDED');
    expect(started).toBe(1);
    release();
    expect(await first.text()).toBe('data: first\n\n');
  });

  it('takes no slot for a client that went while the route worked, and starts no lines for it', async () => {
    let started = 0;
    let entered = 0;
    let release: () => void = () => undefined;
    let held = new Promise<void>((r) => {
      release = r;
    });
    const { app, address } = await appWith(
      async function* () {
        started++;
        yield 'data: one\n\n';
      },
      new StreamSlots(1, 100),
      async (reply) => {
        entered++;
        working = reply;
        await held;
      },
    );
    open = app;
    let working: FastifyReply | null = null;
    const gone = new AbortController();
    const leaving = fetch(`${address}/lines`, { signal: gone.signal }).catch(() => 'gone');
    await until(() => entered === 1, 'the route at work');
    gone.abort();
    expect(await leaving).toBe('gone');
    await until(() => working?.raw.destroyed === true, 'the server to see the client go');
    release();
    // Its one slot was not taken for good: the next stream of the same client is served.
    held = Promise.resolve();
    const next = await fetch(`${address}/lines`);
    expect(next.status).toBe(200);
    expect(await next.text()).toBe('data: one\n\n');
    expect(started).toBe(1);
  });

  it('says Connection: close on a stream answered while the server closes', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered = false;
    const { app, address } = await appWith(async function* () {
      entered = true;
      await held;
      yield 'data: late\n\n';
    });
    const answer = fetch(`${address}/lines`).then(async (r) => ({
      connection: r.headers.get('connection'),
      text: await r.text(),
    }));
    await until(() => entered, 'the stream’s first pull');
    const closing = app.close();
    await until(() => !app.server.listening, 'the server to stop listening');
    release();
    expect(await answer).toEqual({ connection: 'close', text: 'data: late\n\n' });
    await closing;
  });
});
