import { AppError } from '../errors.js';

/** What a caller is told when a job cannot be added: retry shortly (Retry-After, seconds). */
export const QUEUE_RETRY_AFTER_SECONDS = 5;

export function queueUnavailable(reason: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The job queue (Redis) is unreachable; nothing was started, retry shortly',
    { dependency: 'queue', reason },
    { 'retry-after': String(QUEUE_RETRY_AFTER_SECONDS) },
  );
}
