import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerGracefulClose } from './graceful-close.js';

describe('graceful close', () => {
  it('finishes the request in flight, refuses new connections, and does not wait for keep-alive', async () => {
    const app = Fastify({ forceCloseConnections: 'idle' });
    registerGracefulClose(app);
    app.get('/slow', async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { slow: true };
    });
    app.get('/fast', async () => ({ fast: true }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const inFlight = fetch(`${address}/slow`).then(async (r) => ({
      status: r.status,
      connection: r.headers.get('connection'),
      body: await r.json(),
    }));
    await new Promise((r) => setTimeout(r, 100));
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`${address}/fast`)).rejects.toThrow();
    expect(closed).toBe(false);
    expect(await inFlight).toEqual({ status: 200, connection: 'close', body: { slow: true } });
    // Without Connection: close the keep-alive socket would hold close() for keepAliveTimeout (72 s).
    await closing;
    expect(closed).toBe(true);
  });
});
