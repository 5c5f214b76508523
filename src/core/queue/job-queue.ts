import { type JobDefinition, JobPayloadError, JobTimeoutError } from './job-definition.js';

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

/** What a run knows of itself: its attempt (1 for the first) and a signal aborted at its timeout. */
interface JobRun {
  attempt: number;
  signal: AbortSignal;
}

export type JobHandler<T> = (data: T, jobId: string, run: JobRun) => Promise<void>;

type JobOutcome = 'completed' | 'failed';

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

/**
 * One run of a job, the same on every queue: the payload read back is checked against the job's
 * schema (a bad one rejects with `JobPayloadError` before the handler sees it), and the run is
 * bounded by the job's timeout (`JobTimeoutError`; the handler's signal aborts, its late end is
 * ignored). Rejects with the handler's error otherwise; never throws synchronously.
 */
export async function runJob<T>(
  job: JobDefinition<T>,
  handler: JobHandler<T>,
  raw: unknown,
  jobId: string,
  attempt: number,
): Promise<void> {
  const data = job.parse(raw, jobId);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new JobTimeoutError(job.name, jobId, job.timeoutMs);
      controller.abort(error);
      reject(error);
    }, job.timeoutMs);
  });
  const work = Promise.resolve().then(() => handler(data, jobId, { attempt, signal: controller.signal }));
  // Past the timeout nobody awaits the handler: its rejection must not go unhandled.
  work.catch(() => undefined);
  try {
    await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a failed run may run again: attempts left, and not a payload that will never fit. */
export function mayRetry(job: JobDefinition<unknown>, error: unknown, attempt: number): boolean {
  return attempt < job.attempts && !(error instanceof JobPayloadError);
}

/** Calls the observer; its failure never touches the job (the job has already settled). */
export function notifyObserver(observer: JobObserver | undefined, event: JobSettled): void {
  if (!observer) return;
  try {
    observer(event);
  } catch {
    // An observer is a side channel: a broken one loses a data point, never a job.
  }
}
