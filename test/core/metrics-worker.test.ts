import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/listening.js';
import { testRedis } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable, uniqueName } from '../helpers/services.js';
import { stop } from '../scale/support.js';
import { baseEnv, cleanup, startProcess, tempDir } from '../workflows/process/processes.js';

const redisUp = await redisAvailable();
const prefixes: string[] = [];

afterAll(async () => {
  await cleanup();
  if (prefixes.length === 0) return;
  const redis = testRedis();
  try {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
});

/** A `platform worker` on a SQLite file of its own and fresh Redis prefixes. */
function workerEnv(extra: Record<string, string>): Record<string, string> {
  const queuePrefix = uniqueName('qw');
  const redisPrefix = `${uniqueName('rw')}:`;
  prefixes.push(queuePrefix, redisPrefix);
  return {
    ...baseEnv(tempDir()),
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    REDIS_PREFIX: redisPrefix,
    METRICS_ENABLED: 'true',
    ...extra,
  };
}

describe.runIf(redisUp)('metrics of a `platform worker` process', () => {
  it('serves process, job and queue series on METRICS_PORT, and nothing else there', async () => {
    const port = await freePort();
    const worker = startProcess(['worker'], workerEnv({ METRICS_PORT: String(port) }));
    try {
      await worker.waitFor(/workflow worker started/, 60_000);
      await worker.waitFor(new RegExp(`Metrics at http://127\\.0\\.0\\.1:${port}/metrics`));
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(text).toContain('# TYPE platform_job_wait_seconds histogram');
      expect(text).toContain('# TYPE platform_job_run_seconds histogram');
      expect(text).toContain('# TYPE platform_jobs_total counter');
      expect(text).toMatch(/^platform_bullmq_jobs\{queue="workflow-executions",state="waiting"\} 0$/m);
      expect(text).toMatch(/^platform_workflow_executions\{status="new"\} 0$/m);
      // No HTTP API in a worker: no request series.
      expect(text).not.toContain('platform_http_requests_total');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
      // SIGTERM: the listener closes with the worker, which exits cleanly.
      expect(await stop(worker, 5_000)).toBe(0);
    } finally {
      await stop(worker, 5_000);
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('with METRICS_PORT 0 says in one line that it needs METRICS_PORT, and runs on', async () => {
    const worker = startProcess(['worker'], workerEnv({ METRICS_PORT: '0' }));
    try {
      await worker.waitFor(/workflow worker started/, 60_000);
      expect(worker.output().match(/Metrics need METRICS_PORT/g)).toHaveLength(1);
      expect(worker.child.exitCode).toBeNull();
    } finally {
      await stop(worker, 5_000);
    }
  });
});
