import { performance } from 'node:perf_hooks';
import { type JobHandler, type JobObserver, type JobQueue, notifyObserver } from './job-queue.js';

export interface MemoryQueueOptions {
  name: string;
  onError: (error: unknown, jobId: string) => void;
  observer?: JobObserver;
}

/** The single-node queue: a FIFO in this process with a concurrency limit. */
export class MemoryQueue<T> implements JobQueue<T> {
  readonly kind = 'memory' as const;
  /** `addedAt`: performance.now() at add, for the wait time (a monotonic clock: no BullMQ stamp here). */
  private readonly pending: Array<{ id: string; data: T; addedAt: number }> = [];
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private handler: JobHandler<T> | null = null;
  private concurrency = 1;
  private closed = false;

  constructor(private readonly options: MemoryQueueOptions) {}

  async add(jobId: string, data: T): Promise<void> {
    if (this.closed) throw new Error('Queue is closed');
    if (this.known.has(jobId)) return;
    this.known.add(jobId);
    this.pending.push({ id: jobId, data, addedAt: performance.now() });
    this.pump();
  }

  work(handler: JobHandler<T>, concurrency: number): void {
    this.handler = handler;
    this.concurrency = Math.max(1, concurrency);
    this.pump();
  }

  async waiting(): Promise<number> {
    return this.pending.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.length = 0;
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    const handler = this.handler;
    if (!handler) return;
    const { name, onError, observer } = this.options;
    while (!this.closed && this.running.size < this.concurrency && this.pending.length > 0) {
      const job = this.pending.shift() as { id: string; data: T; addedAt: number };
      const startedAt = performance.now();
      const settled = (outcome: 'completed' | 'failed') =>
        notifyObserver(observer, {
          queue: name,
          outcome,
          waitSeconds: (startedAt - job.addedAt) / 1000,
          runSeconds: (performance.now() - startedAt) / 1000,
        });
      const run: Promise<void> = handler(job.data, job.id)
        .then(
          () => settled('completed'),
          (error: unknown) => {
            settled('failed');
            onError(error, job.id);
          },
        )
        .finally(() => {
          this.running.delete(run);
          this.known.delete(job.id);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
