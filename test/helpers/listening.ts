import { createServer } from 'node:net';
import type { Dialect } from '../../src/core/db/types.js';
import { createTestPlatform, type TestPlatform } from './platform.js';
import { uniqueName } from './services.js';

/** A loopback port free right now (for a server that must know its own URL before it listens). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A platform listening on loopback at its `PUBLIC_URL`, with the shipped workflows imported: the
 * named workflows' downstream calls (empty `*_URL` settings) reach this very server, as on the default
 * configuration. `close()` also ends connections a client left open.
 */
export async function listeningPlatform(
  dialect: Dialect,
  env: Record<string, string> = {},
): Promise<TestPlatform> {
  const port = await freePort();
  const p = await createTestPlatform({
    dialect,
    env: {
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      WORKFLOWS_DIR: 'workflows',
      QUEUE_PREFIX: uniqueName('q'),
      ...env,
    },
  });
  await p.app.listen({ port, host: '127.0.0.1' });
  await p.ctx.apis.workflows?.importShipped(p.accountId);
  const close = p.close;
  return {
    ...p,
    async close() {
      p.app.server.closeAllConnections();
      await close();
    },
  };
}
