import type { Server } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Servers closing: their answers say `Connection: close` (streams written apart from Fastify too). */
const closingServers = new WeakSet<Server>();

/** Whether the reply's server is closing (its answers should close their connection). */
export function serverClosing(reply: FastifyReply): boolean {
  return closingServers.has(reply.server.server);
}

/**
 * Node's server.close() drops only the keep-alive connections idle at that moment; one whose
 * request was in flight stays open after its response until keepAliveTimeout, so a shutdown
 * waits for it (or the grace period runs out). While closing, answer with `Connection: close`.
 */
export function registerGracefulClose(app: FastifyInstance): void {
  app.addHook('preClose', async () => {
    closingServers.add(app.server);
  });
  // A callback hook, not an async one: it runs on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closingServers.has(app.server)) reply.header('connection', 'close');
    done(null, payload);
  });
}
