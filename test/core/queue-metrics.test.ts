import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/core/metrics/index.js';
import { registerJobMetrics } from '../../src/core/metrics/jobs.js';
import { createQueue, JobEvents, type JobQueue, type JobSettled } from '../../src/core/queue/index.js';
import { createTestPlatform, deleteRedisPrefixes } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable, uniqueName } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { testJobs } from './support/test-jobs.js';

const redisUp = await redisAvailable();
const prefixes: string[] = [];

afterAll(async () => {
  await deleteRedisPrefixes(prefixes);
});

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      return Number(line.split(' ').at(-1));
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const RUN_MS = 60;

/**
 * Runs one job that succeeds after RUN_MS and, behind it (concurrency 1), one that fails at once,
 * so the second waits at least RUN_MS. Resolves when the queue has reported both.
 */
async function runTwoJobs(queue: JobQueue<{ fail: boolean }>, events: JobEvents): Promise<JobSettled[]> {
  const seen: JobSettled[] = [];
  const done = new Promise<void>((resolve) => {
    const unsubscribe = events.subscribe((event) => {
      seen.push(event);
      if (seen.length === 2) {
        unsubscribe();
        resolve();
      }
    });
  });
  queue.work(async ({ fail }) => {
    if (fail) throw new Error('job failed on purpose');
    await sleep(RUN_MS);
  }, 1);
  await queue.add(uniqueName('ok'), { fail: false });
  await queue.add(uniqueName('bad'), { fail: true });
  await Promise.race([
    done,
    sleep(15_000).then(() => {
      throw new Error(`the queue reported ${seen.length} of 2 jobs`);
    }),
  ]);
  return seen;
}

function expectJobSeries(text: string, queue: string): void {
  const completed = { queue, outcome: 'completed' };
  const failed = { queue, outcome: 'failed' };
  expect(sample(text, 'platform_jobs_total', completed)).toBe(1);
  expect(sample(text, 'platform_jobs_total', failed)).toBe(1);
  for (const name of ['platform_job_wait_seconds', 'platform_job_run_seconds']) {
    expect(sample(text, `${name}_count`, completed)).toBe(1);
    expect(sample(text, `${name}_count`, failed)).toBe(1);
  }
  // The completed job ran RUN_MS; the failed one waited behind it, then ended at once.
  expect(sample(text, 'platform_job_run_seconds_sum', completed)).toBeGreaterThanOrEqual((RUN_MS - 5) / 1000);
  expect(sample(text, 'platform_job_run_seconds_sum', failed)).toBeLessThan(RUN_MS / 1000);
  expect(sample(text, 'platform_job_wait_seconds_sum', failed)).toBeGreaterThanOrEqual((RUN_MS - 5) / 1000);
  expect(sample(text, 'platform_job_run_seconds_bucket', { ...completed, le: '0.05' })).toBe(0);
  expect(sample(text, 'platform_job_run_seconds_bucket', { ...completed, le: '+Inf' })).toBe(1);
}

describe('job metrics of the in-process queue', () => {
  it("the platform's registry counts completed and failed jobs with their wait and run times", async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', env: { WORKFLOW_WORKER: 'false' } });
    const events = new JobEvents();
    const errors: string[] = [];
    const queue = await createQueue(testJobs.failing, {
      redisUrl: '',
      prefix: 'unused',
      onError: (_err, jobId) => errors.push(jobId),
      observer: events.observe,
    });
    try {
      expect(queue.kind).toBe('memory');
      const registry = await createMetricsRegistry({ ...p.ctx, jobEvents: events });
      const before = await registry.metrics();
      expect(before).toContain('# TYPE platform_job_wait_seconds histogram');
      expect(sample(before, 'platform_jobs_total', { queue: 'metrics-test' })).toBeUndefined();
      const seen = await runTwoJobs(queue, events);
      expect(seen.map((e) => e.outcome)).toEqual(['completed', 'failed']);
      expect(errors).toHaveLength(1);
      expectJobSeries(await registry.metrics(), 'metrics-test');
    } finally {
      await queue.close();
      await p.close();
    }
  });

  it('a closed platform stops listening to the job events', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite', env: { WORKFLOW_WORKER: 'false' } });
    const events = new JobEvents();
    const registry = await createMetricsRegistry({ ...p.ctx, jobEvents: events });
    await p.close();
    events.observe({ queue: 'after-close', outcome: 'completed', waitSeconds: 0, runSeconds: 0 });
    expect(sample(await registry.metrics(), 'platform_jobs_total', { queue: 'after-close' })).toBeUndefined();
  });

  it('an observer that throws loses the data point, never the job', async () => {
    const finished: string[] = [];
    const queue = await createQueue(testJobs.text, {
      redisUrl: '',
      prefix: 'unused',
      onError: (err) => finished.push(`error: ${String(err)}`),
      observer: () => {
        throw new Error('observer broke');
      },
    });
    try {
      queue.work(async (data) => {
        finished.push(data);
      }, 1);
      await queue.add('a', 'a');
      await queue.add('b', 'b');
      await until(() => finished.length >= 2, 'both jobs', 20_000);
      expect(finished).toEqual(['a', 'b']);
    } finally {
      await queue.close();
    }
  });
});

describe.runIf(redisUp)('job metrics of the BullMQ queue', () => {
  it('counts completed and failed jobs with their wait and run times', async () => {
    const prefix = uniqueName('qm');
    prefixes.push(prefix);
    const events = new JobEvents();
    const registry = new Registry();
    const unsubscribe = events.subscribe(registerJobMetrics(registry));
    const queue = await createQueue(testJobs.failing, {
      redisUrl: REDIS_URL,
      prefix,
      onError: () => undefined,
      observer: events.observe,
    });
    try {
      expect(queue.kind).toBe('bullmq');
      const seen = await runTwoJobs(queue, events);
      expect(seen.map((e) => e.outcome).sort()).toEqual(['completed', 'failed']);
      expectJobSeries(await registry.metrics(), 'metrics-test');
    } finally {
      unsubscribe();
      await queue.close();
    }
  });
});
