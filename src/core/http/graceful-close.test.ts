import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { until } from '../../../test/helpers/until.js';
import { registerGracefulClose } from './graceful-close.js';

describe('graceful close', () => {
  it('finishes the request in flight, refuses new connections, and does not wait for keep-alive', async () => {
    const app = Fastify({ forceCloseConnections: 'idle' });
    registerGracefulClose(app);
    let entered = false;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    app.get('/slow', async () => {
      entered = true;
      await held;
      return { slow: true };
    });
    app.get('/fast', async () => ({ fast: true }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const inFlight = fetch(`${address}/slow`).then(async (r) => ({
      status: r.status,
      connection: r.headers.get('connection'),
      body: await r.json(),
    }));
    await until(() => entered, 'the slow request in its handler', 20_000);
    let closed = false;
    const closing = app.close().then(() => {
      closed = true;
    });
    await until(() => !app.server.listening, 'the server to stop listening', 20_000);
    await expect(fetch(`${address}/fast`)).rejects.toThrow();
    expect(closed).toBe(false);
    release();
    expect(await inFlight).toEqual({ status: 200, connection: 'close', body: { slow: true } });
    // Without Connection: close the keep-alive socket would hold close() for keepAliveTimeout (72 s).
    await closing;
    expect(closed).toBe(true);
  });
});
