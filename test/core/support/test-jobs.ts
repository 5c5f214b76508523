import { Type } from 'typebox';
import { defineJob } from '../../../src/core/queue/index.js';

/** Jobs the queue tests declare for themselves (the platform's own are in core/queue/jobs.ts). */
export const testJobs = {
  /** The fair queue's tests: a job of a group (an account), named for the order checks. */
  grouped: defineJob({
    name: 'jobs',
    payload: Type.Object({ group: Type.String(), name: Type.String() }),
    timeoutMs: 60_000,
    attempts: 1,
  }),
  /** The metrics tests: a job that fails when asked. */
  failing: defineJob({
    name: 'metrics-test',
    payload: Type.Object({ fail: Type.Boolean() }),
    timeoutMs: 60_000,
    attempts: 1,
  }),
  text: defineJob({ name: 'metrics-test', payload: Type.String(), timeoutMs: 60_000, attempts: 1 }),
};
