import type { Fairness } from './fair-order.js';
import type { JobDefinition } from './job-definition.js';
import type { JobObserver, JobQueue } from './job-queue.js';
import { MemoryQueue } from './memory-queue.js';

export {
  defineJob,
  type JobDefinition,
  type JobPayload,
  JobPayloadError,
  JobTimeoutError,
} from './job-definition.js';
export { JobEvents } from './job-events.js';
export type { JobQueue, JobSettled } from './job-queue.js';
export { jobs } from './jobs.js';

interface QueueSettings<T = unknown> {
  /** Empty: the in-process queue. */
  redisUrl: string;
  prefix: string;
  onError: (error: unknown, jobId: string) => void;
  /** Told about every job this process runs (the platform's `ctx.jobEvents.observe`: metrics). */
  observer?: JobObserver;
  /** BullMQ: a job lock's lifetime and the stalled-job check's period, in seconds (default 30). */
  stallSeconds?: number;
  /** BullMQ: longest a command (an add) may take before Redis counts as unreachable. */
  commandTimeoutMs?: number;
  /**
   * Per-group slots with groups served round-robin (workflow executions: per account). With Redis,
   * the shared fair queue (fair-redis-queue.ts) instead of BullMQ's FIFO.
   */
  fairness?: Fairness<T>;
}

/**
 * One queue per kind of job, declared in the catalogue (jobs.ts); BullMQ when Redis is configured,
 * else in-process. BullMQ and its Redis client load only then: the embedded default does not carry
 * them in memory.
 */
export async function createQueue<T>(
  job: JobDefinition<T>,
  settings: QueueSettings<T>,
): Promise<JobQueue<T>> {
  if (settings.redisUrl && settings.fairness) {
    const { FairRedisQueue } = await import('./fair-redis-queue.js');
    return new FairRedisQueue<T>({
      redisUrl: settings.redisUrl,
      prefix: settings.prefix,
      job,
      onError: settings.onError,
      observer: settings.observer,
      fairness: settings.fairness,
      ...(settings.stallSeconds ? { stallSeconds: settings.stallSeconds } : {}),
      ...(settings.commandTimeoutMs ? { commandTimeoutMs: settings.commandTimeoutMs } : {}),
    });
  }
  if (settings.redisUrl) {
    const { BullQueue } = await import('./bullmq-queue.js');
    return new BullQueue<T>({
      redisUrl: settings.redisUrl,
      prefix: settings.prefix,
      job,
      onError: settings.onError,
      observer: settings.observer,
      ...(settings.stallSeconds ? { stallSeconds: settings.stallSeconds } : {}),
      ...(settings.commandTimeoutMs ? { commandTimeoutMs: settings.commandTimeoutMs } : {}),
    });
  }
  return new MemoryQueue<T>({
    job,
    onError: settings.onError,
    observer: settings.observer,
    ...(settings.fairness ? { fairness: settings.fairness } : {}),
  });
}
