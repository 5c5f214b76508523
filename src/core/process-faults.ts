import { dependencyFault, pgFault } from './db/faults.js';

type Log = {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

/** ioredis's words for a connection that is down; its reconnect brings it back by itself. */
const REDIS_DOWN =
  /^(Connection is closed|Reached the max retries per request limit|Stream isn't writeable|Command timed out)/i;

/** Whether an error is ioredis saying Redis cannot be reached now (down, paused, restarting). */
export function isRedisDown(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'MaxRetriesPerRequestError' || REDIS_DOWN.test(error.message);
}

/**
 * Whether an error that reached the process (an unheard `error` event, a rejection nobody awaited)
 * is a dependency going away: the database or Redis restarting, a socket reset, a full disk. The
 * clients reconnect by themselves and requests get 503s meanwhile, so the process must go on.
 */
export function isPassingFault(error: unknown): boolean {
  return dependencyFault(error) !== null || pgFault(error) !== null || isRedisDown(error);
}

interface FaultHandlingOptions {
  log: Log;
  /** Closes the app; bounded by `graceMs`, then the process exits with 1. */
  shutdown(): Promise<void>;
  graceMs: number;
}

/**
 * Replaces close-with-grace's handling of uncaught errors (installed with `skip` for them): a
 * dependency's fault is logged and the process goes on; anything else is a bug, and the process
 * shuts down gracefully and exits with 1 as before. Returns the uninstall function.
 */
export function handleProcessErrors(options: FaultHandlingOptions): () => void {
  let ending = false;
  const onError = (error: unknown) => {
    if (isPassingFault(error)) {
      options.log.warn({ err: error }, 'dependency fault outside a request; the process goes on');
      return;
    }
    if (ending) return;
    ending = true;
    options.log.error({ err: error }, 'shutting down after error');
    const timer = setTimeout(() => process.exit(1), options.graceMs);
    timer.unref();
    options.shutdown().then(
      () => process.exit(1),
      () => process.exit(1),
    );
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return () => {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  };
}
