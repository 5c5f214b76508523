import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.js';

type TimeoutOptions = Pick<
  FastifyServerOptions,
  'connectionTimeout' | 'keepAliveTimeout' | 'requestTimeout'
> & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
};

/**
 * The Node server's clocks against clients that hold a connection without finishing a request
 * (slow loris): headers and the whole request must arrive in time, an idle socket is closed.
 * Node checks the header and request clocks every `connectionsCheckingInterval` (30 s by
 * default, which would double a 30 s bound), so it is tied to the shortest of them.
 */
export function serverTimeouts(config: Config): TimeoutOptions {
  const requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  // Node refuses a header clock longer than the request clock.
  const headersTimeout = Math.min(config.HTTP_HEADERS_TIMEOUT_MS, requestTimeout);
  const connectionsCheckingInterval = Math.max(25, Math.min(1_000, Math.floor(headersTimeout / 4)));
  return {
    // The idle clock also runs while a handler works: never below the longest wait a route allows.
    connectionTimeout: Math.max(
      config.HTTP_CONNECTION_TIMEOUT_MS,
      config.WEBHOOK_RESPONSE_TIMEOUT_MS + 5_000,
    ),
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout,
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval },
  };
}
