import type { RedisOptions } from 'ioredis';

/** Reconnect attempts come at most this far apart, so service resumes within it once Redis is back. */
const MAX_RECONNECT_DELAY_MS = 1_000;

/**
 * Options of the platform's Redis clients. Commands are bounded: a stopped or unreachable Redis
 * fails them after `commandTimeoutMs` instead of holding them (and the caller) until it returns;
 * reconnecting never gives up and retries at least every second.
 */
export function redisOptions(commandTimeoutMs: number): RedisOptions {
  return {
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1_000),
    // A command cut off by a dropped connection is retried once on the next one, then fails.
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
    // Dead peers (a host gone, not just the server) are noticed by the kernel.
    keepAlive: 10_000,
  };
}

/**
 * A BullMQ worker's connection: its blocking reads wait for jobs as long as BullMQ asks, so no
 * command timeout, and BullMQ requires `maxRetriesPerRequest: null`. It reconnects as quickly.
 */
export function blockingRedisOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
    keepAlive: 10_000,
  };
}
