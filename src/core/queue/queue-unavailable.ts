import { AppError } from '../errors.js';

/** What a caller is told when a job cannot be added: retry shortly (Retry-After, seconds). */
const QUEUE_RETRY_AFTER_SECONDS = 5;

export function queueUnavailable(reason: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The job queue (Redis) is unreachable; nothing was started, retry shortly',
    { dependency: 'queue', reason },
    { 'retry-after': String(QUEUE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * An add to the queue, bounded: an unreachable Redis is a 503 after `commandTimeoutMs` (plus a margin
 * for the client's own timeout to fire first), never a caller held until Redis returns. The add may
 * still land later: callers make a late job harmless (the execution it names is canceled first).
 */
export async function boundedAdd(add: Promise<unknown>, commandTimeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(queueUnavailable('timeout')), commandTimeoutMs + 500);
  });
  try {
    await Promise.race([add, late]);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw queueUnavailable(error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
