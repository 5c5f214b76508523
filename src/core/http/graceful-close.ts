import type { FastifyInstance } from 'fastify';

/**
 * Node's server.close() drops only the keep-alive connections idle at that moment; one whose
 * request was in flight stays open after its response until keepAliveTimeout, so a shutdown
 * waits for it (or the grace period runs out). While closing, answer with `Connection: close`.
 */
export function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
