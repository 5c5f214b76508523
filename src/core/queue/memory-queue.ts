import { performance } from 'node:perf_hooks';
import { type Fairness, FairOrder } from './fair-order.js';
import type { JobDefinition } from './job-definition.js';
import {
  type JobHandler,
  type JobObserver,
  type JobQueue,
  mayRetry,
  notifyObserver,
  runJob,
} from './job-queue.js';

interface MemoryQueueOptions<T> {
  /** The job's declaration (jobs.ts): its name, payload schema, timeout and attempts. */
  job: JobDefinition<T>;
  onError: (error: unknown, jobId: string) => void;
  observer?: JobObserver;
  /** Per-group slots, groups served round-robin; absent: one FIFO. */
  fairness?: Fairness<T>;
}

/**
 * `addedAt`: performance.now() at add, for the wait time (a monotonic clock: no BullMQ stamp here).
 * `data` is checked again when it runs, as on Redis: the in-process queue keeps no different rules.
 */
type Pending<T> = { id: string; data: T; addedAt: number; attempt: number };

/** The single-node queue: waiting jobs in this process (FIFO, or round-robin by group) under a concurrency limit. */
export class MemoryQueue<T> implements JobQueue<T> {
  readonly kind = 'memory' as const;
  private readonly pending: FairOrder<Pending<T>>;
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private handler: JobHandler<T> | null = null;
  private concurrency = 1;
  private closed = false;

  constructor(private readonly options: MemoryQueueOptions<T>) {
    this.pending = new FairOrder(
      options.fairness ? Math.max(1, options.fairness.perGroup) : Number.POSITIVE_INFINITY,
    );
  }

  async add(jobId: string, data: T): Promise<void> {
    if (this.closed) throw new Error('Queue is closed');
    if (this.known.has(jobId)) return;
    const checked = this.options.job.parse(data, jobId);
    this.known.add(jobId);
    this.push({ id: jobId, data: checked, addedAt: performance.now(), attempt: 1 });
  }

  private push(pending: Pending<T>): void {
    const group = this.options.fairness?.groupOf(pending.data) ?? '';
    this.pending.push(group, pending);
    this.pump();
  }

  work(handler: JobHandler<T>, concurrency: number): void {
    this.handler = handler;
    this.concurrency = Math.max(1, concurrency);
    this.pump();
  }

  async waiting(): Promise<number> {
    return this.pending.waiting;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    const handler = this.handler;
    if (!handler) return;
    const { job: definition, onError, observer } = this.options;
    while (!this.closed && this.running.size < this.concurrency) {
      const next = this.pending.take();
      if (!next) return;
      const { group, job } = next;
      const startedAt = performance.now();
      const settled = (outcome: 'completed' | 'failed') =>
        notifyObserver(observer, {
          queue: definition.name,
          outcome,
          waitSeconds: (startedAt - job.addedAt) / 1000,
          runSeconds: (performance.now() - startedAt) / 1000,
        });
      let retry = false;
      const run: Promise<void> = runJob(definition, handler, job.data, job.id, job.attempt)
        .then(
          () => settled('completed'),
          (error: unknown) => {
            settled('failed');
            retry = !this.closed && mayRetry(definition, error, job.attempt);
            // Told once, when the job has failed for good.
            if (!retry) onError(error, job.id);
          },
        )
        .finally(() => {
          this.running.delete(run);
          this.pending.done(group);
          if (retry) this.push({ ...job, addedAt: performance.now(), attempt: job.attempt + 1 });
          else {
            this.known.delete(job.id);
            this.pump();
          }
        });
      this.running.add(run);
    }
  }
}
