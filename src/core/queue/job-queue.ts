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

export type JobOutcome = 'completed' | 'failed';

/** One job this process ran, reported when its handler settled. */
export interface JobSettled {
  queue: string;
  outcome: JobOutcome;
  /** From add to start, ≥ 0. On BullMQ the two ends may be stamped by different hosts' clocks. */
  waitSeconds: number;
  /** From start to the handler's end. */
  runSeconds: number;
}

/** Told about every job a queue runs; how the metrics see jobs without core/queue knowing of them. */
export type JobObserver = (event: JobSettled) => void;

/** Calls the observer; its failure never touches the job (the job has already settled). */
export function notifyObserver(observer: JobObserver | undefined, event: JobSettled): void {
  if (!observer) return;
  try {
    observer(event);
  } catch {
    // An observer is a side channel: a broken one loses a data point, never a job.
  }
}
