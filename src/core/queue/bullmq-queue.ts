import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { type JobHandler, type JobObserver, type JobQueue, notifyObserver } from './job-queue.js';

export interface BullQueueOptions {
  redisUrl: string;
  prefix: string;
  name: string;
  onError: (error: unknown, jobId: string) => void;
  observer?: JobObserver;
  /** A job lock's lifetime (renewed at half of it while the job runs) and the stalled check's period. */
  stallSeconds?: number;
}

/**
 * The shared queue: jobs live in Redis, so any `platform worker` process may run them and a job
 * whose worker died is handed to another (BullMQ's stalled-job check).
 */
export class BullQueue<T> implements JobQueue<T> {
  readonly kind = 'bullmq' as const;
  private readonly queue: Queue;
  private readonly connections: Redis[] = [];
  private worker: Worker | null = null;

  constructor(private readonly options: BullQueueOptions) {
    this.queue = new Queue(options.name, { connection: this.connection(), prefix: options.prefix });
  }

  private connection(): Redis {
    // Blocking worker commands must not time out: BullMQ requires maxRetriesPerRequest null.
    const redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: null });
    this.connections.push(redis);
    return redis;
  }

  async add(jobId: string, data: T): Promise<void> {
    await this.queue.add('job', data, {
      jobId,
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600, count: 1000 },
    });
  }

  work(handler: JobHandler<T>, concurrency: number): void {
    if (this.worker) return;
    this.worker = new Worker(
      this.options.name,
      async (job) => {
        const startedAt = performance.now();
        // Wall clocks: `timestamp` is stamped by the process that added the job, `processedOn` by
        // this one when it took it; skew between hosts can make the difference negative.
        const waitSeconds = Math.max(0, ((job.processedOn ?? Date.now()) - job.timestamp) / 1000);
        const settled = (outcome: 'completed' | 'failed') =>
          notifyObserver(this.options.observer, {
            queue: this.options.name,
            outcome,
            waitSeconds,
            runSeconds: (performance.now() - startedAt) / 1000,
          });
        try {
          await handler(job.data as T, String(job.id));
        } catch (error) {
          settled('failed');
          this.options.onError(error, String(job.id));
          throw error;
        }
        settled('completed');
      },
      {
        connection: this.connection(),
        prefix: this.options.prefix,
        concurrency: Math.max(1, concurrency),
        ...(this.options.stallSeconds
          ? {
              lockDuration: this.options.stallSeconds * 1000,
              stalledInterval: this.options.stallSeconds * 1000,
            }
          : {}),
      },
    );
    this.worker.on('error', (error) => this.options.onError(error, ''));
  }

  async waiting(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
    await Promise.allSettled(this.connections.map((c) => c.quit()));
  }
}
