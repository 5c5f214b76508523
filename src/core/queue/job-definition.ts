import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/** What declares a kind of job (trigger.dev's `workerCatalog` entries): see jobs.ts for the catalogue. */
interface JobSpec<S extends TSchema> {
  /** The queue's name: its Redis keys and the `queue` label of the job metrics. */
  name: string;
  /** What a job carries; checked when it is added and again when a worker reads it back. */
  payload: S;
  /**
   * Longest one run may hold its slot. Past it the run fails with a `JobTimeoutError`, the handler's
   * signal aborts and the slot is freed (a handler that ignores the signal finishes unobserved).
   */
  timeoutMs: number;
  /** Runs in all before the job counts as failed (1: never retried). A bad payload is never retried. */
  attempts: number;
}

/** A declared job: its spec plus a compiled check of its payload. */
export interface JobDefinition<T> {
  readonly name: string;
  readonly payload: TSchema;
  readonly timeoutMs: number;
  readonly attempts: number;
  /** Where `value` departs from the payload schema (at most a few lines); empty when it is a T. */
  problems(value: unknown): string[];
  /** The payload, checked: a `JobPayloadError` when it does not fit. */
  parse(value: unknown, jobId: string): T;
}

/** The payload of a declared job. */
export type JobPayload<D> = D extends JobDefinition<infer T> ? T : never;

const MAX_PROBLEMS = 5;

export function defineJob<S extends TSchema>(spec: JobSpec<S>): JobDefinition<Static<S>> & { payload: S } {
  if (!Number.isInteger(spec.attempts) || spec.attempts < 1)
    throw new Error(`Job ${spec.name}: attempts must be an integer ≥ 1`);
  if (!(spec.timeoutMs > 0)) throw new Error(`Job ${spec.name}: timeoutMs must be > 0`);
  const checker = Compile(spec.payload);
  const problems = (value: unknown): string[] => {
    if (checker.Check(value)) return [];
    return [...checker.Errors(value)]
      .slice(0, MAX_PROBLEMS)
      .map((e) => `${e.instancePath || '/'} ${e.message}`);
  };
  return {
    ...spec,
    problems,
    parse(value, jobId) {
      if (checker.Check(value)) return value as Static<S>;
      throw new JobPayloadError(spec.name, jobId, problems(value));
    },
  };
}

/** A payload that does not fit its job's schema: that job fails (never retried), the worker goes on. */
export class JobPayloadError extends Error {
  override readonly name = 'JobPayloadError';
  constructor(
    readonly job: string,
    readonly jobId: string,
    readonly problems: string[],
  ) {
    super(`Job ${job} ${jobId}: its payload does not fit the job's schema: ${problems.join('; ')}`);
  }
}

/** A run that held its slot past its job's `timeoutMs`. */
export class JobTimeoutError extends Error {
  override readonly name = 'JobTimeoutError';
  constructor(job: string, jobId: string, timeoutMs: number) {
    super(`Job ${job} ${jobId} ran past its timeout (${timeoutMs} ms) and was abandoned`);
  }
}
