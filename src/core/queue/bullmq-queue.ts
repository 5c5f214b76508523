import { performance } from 'node:perf_hooks';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { type JobDefinition, JobPayloadError } from './job-definition.js';
import {
  type JobHandler,
  type JobObserver,
  type JobQueue,
  mayRetry,
  notifyObserver,
  runJob,
} from './job-queue.js';
import { boundedAdd } from './queue-unavailable.js';
import { blockingRedisOptions, redisOptions } from './redis-options.js';

interface BullQueueOptions<T> {
  redisUrl: string;
  prefix: string;
  /** The job's declaration (jobs.ts): its name, payload schema, timeout and attempts. */
  job: JobDefinition<T>;
  onError: (error: unknown, jobId: string) => void;
  observer?: JobObserver;
  /** A job lock's lifetime (renewed at half of it while the job runs) and the stalled check's period. */
  stallSeconds?: number;
  /** Longest a command (an add) may take before Redis counts as unreachable (REDIS_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
}

const CONNECTION_ERROR_EVERY_MS = 10_000;

/**
 * The shared queue: jobs live in Redis, so any `platform worker` process may run them and a job
 * whose worker died is handed to another (BullMQ's stalled-job check).
 */
export class BullQueue<T> implements JobQueue<T> {
  readonly kind = 'bullmq' as const;
  private readonly queue: Queue;
  private readonly connections: Redis[] = [];
  private worker: Worker | null = null;
  private lastConnectionError = 0;

  constructor(private readonly options: BullQueueOptions<T>) {
    const queueConnection = this.connection(redisOptions(this.commandTimeoutMs));
    this.queue = new Queue(options.job.name, { connection: queueConnection, prefix: options.prefix });
    // BullMQ re-emits its connection's errors; unheard, an 'error' event would end the process.
    this.queue.on('error', (error) => this.connectionError(error));
  }

  /** Connection trouble repeats every reconnect attempt: told at most once per CONNECTION_ERROR_EVERY_MS. */
  private connectionError(error: unknown): void {
    const now = Date.now();
    if (now - this.lastConnectionError < CONNECTION_ERROR_EVERY_MS) return;
    this.lastConnectionError = now;
    this.options.onError(error, '');
  }

  private get commandTimeoutMs(): number {
    return this.options.commandTimeoutMs ?? 2_000;
  }

  private connection(settings: RedisOptions): Redis {
    const redis = new Redis(this.options.redisUrl, settings);
    // Reconnects are the client's job (retryStrategy); an unheard 'error' event must not throw.
    redis.on('error', () => undefined);
    this.connections.push(redis);
    return redis;
  }

  /**
   * Bounded: an unreachable Redis is a 503 (`SERVICE_UNAVAILABLE`, dependency `queue`) after the
   * command timeout at most, not a caller held until Redis returns. The add may still reach Redis
   * later (it was sent before Redis stopped answering): callers make a late job harmless (the
   * execution it names is canceled first, see webhook-service.ts).
   */
  async add(jobId: string, data: T): Promise<void> {
    const checked = this.options.job.parse(data, jobId);
    await boundedAdd(
      this.queue.add('job', checked, {
        jobId,
        // BullMQ retries a failed run at once (no backoff) until the job's attempts are spent.
        attempts: this.options.job.attempts,
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600, count: 1000 },
      }),
      this.commandTimeoutMs,
    );
  }

  work(handler: JobHandler<T>, concurrency: number): void {
    if (this.worker) return;
    const definition = this.options.job;
    this.worker = new Worker(
      definition.name,
      async (job) => {
        const startedAt = performance.now();
        // Wall clocks: `timestamp` is stamped by the process that added the job, `processedOn` by
        // this one when it took it; skew between hosts can make the difference negative.
        const waitSeconds = Math.max(0, ((job.processedOn ?? Date.now()) - job.timestamp) / 1000);
        const settled = (outcome: 'completed' | 'failed') =>
          notifyObserver(this.options.observer, {
            queue: definition.name,
            outcome,
            waitSeconds,
            runSeconds: (performance.now() - startedAt) / 1000,
          });
        const attempt = job.attemptsMade + 1;
        try {
          // job.data is what Redis gave back: runJob checks it against the schema first.
          await runJob(definition, handler, job.data, String(job.id), attempt);
        } catch (error) {
          settled('failed');
          // Told once, when the job has failed for good; a bad payload is not retried.
          if (!mayRetry(definition, error, attempt)) this.options.onError(error, String(job.id));
          if (error instanceof JobPayloadError) throw new UnrecoverableError(error.message);
          throw error;
        }
        settled('completed');
      },
      {
        // Blocking reads must not time out: BullMQ requires maxRetriesPerRequest null.
        connection: this.connection(blockingRedisOptions()),
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
    this.worker.on('error', (error) => this.connectionError(error));
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
