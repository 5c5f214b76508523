import { BullQueue } from './bullmq-queue.js';
import type { JobQueue } from './job-queue.js';
import { MemoryQueue } from './memory-queue.js';

export type { JobHandler, JobQueue } from './job-queue.js';

export interface QueueSettings {
  /** Empty: the in-process queue. */
  redisUrl: string;
  prefix: string;
  onError: (error: unknown, jobId: string) => void;
}

/** One queue per kind of job; BullMQ when Redis is configured, else in-process. */
export function createQueue<T>(name: string, settings: QueueSettings): JobQueue<T> {
  if (settings.redisUrl) {
    return new BullQueue<T>({
      redisUrl: settings.redisUrl,
      prefix: settings.prefix,
      name,
      onError: settings.onError,
    });
  }
  return new MemoryQueue<T>(settings.onError);
}
