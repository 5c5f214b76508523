import type { JobHandler, JobQueue } from './job-queue.js';

/** The single-node queue: a FIFO in this process with a concurrency limit. */
export class MemoryQueue<T> implements JobQueue<T> {
  readonly kind = 'memory' as const;
  private readonly pending: Array<{ id: string; data: T }> = [];
  private readonly known = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private handler: JobHandler<T> | null = null;
  private concurrency = 1;
  private closed = false;

  constructor(private readonly onError: (error: unknown, jobId: string) => void) {}

  async add(jobId: string, data: T): Promise<void> {
    if (this.closed) throw new Error('Queue is closed');
    if (this.known.has(jobId)) return;
    this.known.add(jobId);
    this.pending.push({ id: jobId, data });
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
    while (!this.closed && this.running.size < this.concurrency && this.pending.length > 0) {
      const job = this.pending.shift() as { id: string; data: T };
      const run: Promise<void> = handler(job.data, job.id)
        .catch((error: unknown) => this.onError(error, job.id))
        .finally(() => {
          this.running.delete(run);
          this.known.delete(job.id);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
