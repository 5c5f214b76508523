import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { NodeOperationError } from '../../../engine/node-type.js';
import { type AddressOf, guardedAddress } from '../sql/address.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, isOn } from '../sql/bounds.js';

/** n8n's `redis` credential, as stored (text values). */
export type RedisCredential = Record<string, string | undefined>;

const MAX_CLIENTS = 50;
const clients = new Map<string, Promise<Redis>>();

/** ioredis options for the credential at the checked address (no retries: a node fails at once). */
export async function redisOptions(c: RedisCredential, addressOf: AddressOf | undefined) {
  const { address, port } = await guardedAddress(c, addressOf, 6379, 'Redis');
  const db = Number(c.database ?? 0);
  if (!Number.isInteger(db) || db < 0 || db > 1_000)
    throw new NodeOperationError(`The credential's database '${c.database}' is not a Redis database index`);
  return {
    host: address,
    port,
    db,
    ...(c.user ? { username: c.user } : {}),
    ...(c.password ? { password: c.password } : {}),
    ...(isOn(c.ssl)
      ? { tls: { servername: c.host, rejectUnauthorized: !isOn(c.disableTlsVerification) } }
      : {}),
    connectTimeout: DEFAULT_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: true,
    retryStrategy: () => null,
  };
}

/** ioredis loads when the first Redis node runs, not with the platform. */
export async function ioredis() {
  return (await import('ioredis')).Redis;
}

/**
 * A client for the credential, shared by the runs that use it (Redis multiplexes one connection);
 * a client that lost its connection is replaced at the next run.
 */
export async function redisClient(c: RedisCredential, addressOf: AddressOf | undefined): Promise<Redis> {
  const options = await redisOptions(c, addressOf);
  const key = createHash('sha256').update(JSON.stringify(options)).digest('hex');
  const found = clients.get(key);
  if (found) {
    const client = await found.catch(() => null);
    if (client && client.status === 'ready') return client;
    clients.delete(key);
    client?.disconnect();
  }
  const opening = (async () => {
    const Redis = await ioredis();
    const client = new Redis(options);
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      client.disconnect();
      throw new NodeOperationError(`Could not connect to Redis: ${(err as Error).message}`);
    }
    return client;
  })();
  clients.set(key, opening);
  opening.catch(() => clients.delete(key));
  if (clients.size > MAX_CLIENTS) {
    const [oldest, old] = clients.entries().next().value as [string, Promise<Redis>];
    clients.delete(oldest);
    void old.then((r) => r.disconnect()).catch(() => undefined);
  }
  return opening;
}
