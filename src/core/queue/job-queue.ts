/**
 * A durable-enough job queue: jobs carry only an id and small data; the state that must survive
 * a crash lives in the database (the job's owner re-adds what was queued on restart).
 */
export interface JobQueue<T> {
  readonly kind: 'memory' | 'bullmq';
  /** Adds a job. Adding an id that is still queued or running is a no-op. */
  add(jobId: string, data: T): Promise<void>;
  /** Starts running jobs in this process, at most `concurrency` at a time. */
  work(handler: JobHandler<T>, concurrency: number): void;
  /** Jobs waiting to run (not counting running ones). */
  waiting(): Promise<number>;
  /** Stops taking jobs, waits for running ones, releases connections. */
  close(): Promise<void>;
}

export type JobHandler<T> = (data: T, jobId: string) => Promise<void>;
