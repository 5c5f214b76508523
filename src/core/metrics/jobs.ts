import { Counter, Histogram, type Registry } from 'prom-client';
import type { JobSettled } from '../queue/index.js';

/** Seconds; from a document chunked at once to a workflow that runs or waits for many minutes. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * Wait and run time of the jobs this process ran, and their count, by queue and outcome. Returns
 * the listener to subscribe to the platform's job events (core/queue/job-events.ts). The queue
 * label takes the names core/queue's callers give, a closed set.
 */
export function registerJobMetrics(registry: Registry): (event: JobSettled) => void {
  const labelNames = ['queue', 'outcome'] as const;
  const wait = new Histogram({
    name: 'platform_job_wait_seconds',
    help: 'Time a job waited in its queue, from add to start, by queue and outcome',
    labelNames,
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const run = new Histogram({
    name: 'platform_job_run_seconds',
    help: 'Time a job ran, from start to end, by queue and outcome',
    labelNames,
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const total = new Counter({
    name: 'platform_jobs_total',
    help: 'Jobs this process ran to the end, by queue and outcome (completed, failed)',
    labelNames,
    registers: [registry],
  });
  return ({ queue, outcome, waitSeconds, runSeconds }) => {
    const labels = { queue, outcome };
    wait.observe(labels, waitSeconds);
    run.observe(labels, runSeconds);
    total.inc(labels);
  };
}
