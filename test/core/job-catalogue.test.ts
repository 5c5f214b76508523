import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Type } from 'typebox';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createQueue,
  defineJob,
  type JobDefinition,
  JobPayloadError,
  type JobQueue,
  JobTimeoutError,
  jobs,
} from '../../src/core/queue/index.js';
import { deleteRedisPrefixes } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable, uniqueName } from '../helpers/services.js';
import { until } from '../helpers/until.js';

/**
 * The job catalogue on every queue: a payload is checked when it is added and again when a worker
 * reads it back (a bad one fails that job, never the worker), a run is bounded by its job's timeout,
 * and a failed run runs again until the job's attempts are spent.
 */
const hasRedis = await redisAvailable();
const prefixes: string[] = [];
afterAll(async () => {
  await deleteRedisPrefixes(prefixes);
});

const Payload = Type.Object({ group: Type.String(), n: Type.Integer() });
type Payload = { group: string; n: number };
const job = (over: { timeoutMs?: number; attempts?: number } = {}) =>
  defineJob({
    name: uniqueName('catalogue'),
    payload: Payload,
    timeoutMs: over.timeoutMs ?? 30_000,
    attempts: over.attempts ?? 1,
  });

interface Kind {
  label: string;
  redis: boolean;
  fair: boolean;
}
const kinds: Kind[] = [{ label: 'in-process', redis: false, fair: true }];
if (hasRedis)
  kinds.push({ label: 'fair Redis', redis: true, fair: true }, { label: 'BullMQ', redis: true, fair: false });

/** What a queue told its owner: failed jobs with their errors, in order. */
interface Harness<T> {
  queue: JobQueue<T>;
  prefix: string;
  errors: Array<{ jobId: string; error: unknown }>;
  outcomes: string[];
}

async function open(kind: Kind, definition: JobDefinition<Payload>): Promise<Harness<Payload>> {
  const prefix = uniqueName('jc');
  if (kind.redis) prefixes.push(prefix);
  const errors: Harness<Payload>['errors'] = [];
  const outcomes: string[] = [];
  const queue = await createQueue(definition, {
    redisUrl: kind.redis ? REDIS_URL : '',
    prefix,
    stallSeconds: 5,
    onError: (error, jobId) => {
      if (jobId) errors.push({ jobId, error });
    },
    observer: (event) => outcomes.push(event.outcome),
    ...(kind.fair ? { fairness: { groupOf: (d: Payload) => d.group, perGroup: 1 } } : {}),
  });
  return { queue, prefix, errors, outcomes };
}

describe.each(kinds)('the job catalogue on the $label queue', (kind) => {
  it('refuses to add a payload that does not fit the schema, naming where it departs', async () => {
    const { queue } = await open(kind, job());
    try {
      const bad = { group: 'A', n: 'one' } as unknown as Payload;
      const refused = await queue.add('bad', bad).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(JobPayloadError);
      expect((refused as JobPayloadError).problems.join()).toContain('/n');
      expect(await queue.waiting()).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('a payload read back that does not fit fails that job clearly; the worker runs the next', async () => {
    const definition = job({ attempts: 3 });
    const h = await open(kind, definition);
    const ran: number[] = [];
    try {
      await plantBadJob(kind, h, definition);
      await h.queue.add('good', { group: 'A', n: 2 });
      h.queue.work(async (data) => {
        ran.push(data.n);
      }, 1);
      await until(
        () => ran.includes(2) && h.errors.length > 0,
        'the good job and the bad one settled',
        20_000,
      );
      // The bad one never reached the handler, failed once (no retry of a payload that cannot fit).
      expect(ran).toEqual([2]);
      expect(h.errors).toHaveLength(1);
      const { jobId, error } = h.errors[0] as { jobId: string; error: unknown };
      expect(jobId).toBe('bad');
      expect(String(error)).toMatch(/payload does not fit the job's schema/);
      expect(String(error)).toContain('/n');
      await until(() => h.outcomes.length === 2, 'both outcomes');
      expect([...h.outcomes].sort()).toEqual(['completed', 'failed']);
    } finally {
      await h.queue.close();
    }
  });

  it("a run past its job's timeout fails, its signal aborts and its slot is freed", async () => {
    const h = await open(kind, job({ timeoutMs: 300 }));
    const aborted: unknown[] = [];
    const ran: number[] = [];
    try {
      h.queue.work(async (data, _id, run) => {
        ran.push(data.n);
        if (data.n === 1) {
          // Never ends by itself: only its signal tells it the run is over.
          run.signal.addEventListener('abort', () => aborted.push(run.signal.reason));
          await new Promise(() => {});
        }
      }, 1);
      await h.queue.add('hung', { group: 'A', n: 1 });
      await h.queue.add('next', { group: 'A', n: 2 });
      await until(() => ran.includes(2), 'the job behind the hung one ran', 20_000);
      expect(h.errors.map((e) => e.jobId)).toEqual(['hung']);
      expect(h.errors[0]?.error).toBeInstanceOf(JobTimeoutError);
      expect(aborted).toHaveLength(1);
      expect(aborted[0]).toBeInstanceOf(JobTimeoutError);
    } finally {
      await h.queue.close();
    }
  });

  it('a failed run runs again until the attempts are spent, and is told once', async () => {
    const h = await open(kind, job({ attempts: 3 }));
    const attempts: Record<string, number[]> = { flaky: [], broken: [] };
    try {
      h.queue.work(async (_data, jobId, run) => {
        attempts[jobId]?.push(run.attempt);
        if (jobId === 'broken' || run.attempt < 2)
          throw new Error(`${jobId} failed at attempt ${run.attempt}`);
      }, 1);
      await h.queue.add('flaky', { group: 'A', n: 1 });
      await h.queue.add('broken', { group: 'B', n: 2 });
      await until(() => h.errors.length > 0 && attempts.flaky?.length === 2, 'both jobs settled', 20_000);
      expect(attempts).toEqual({ flaky: [1, 2], broken: [1, 2, 3] });
      expect(h.errors.map((e) => [e.jobId, String(e.error)])).toEqual([
        ['broken', 'Error: broken failed at attempt 3'],
      ]);
      await until(() => h.outcomes.length === 5, 'every run reported');
      expect(h.outcomes.filter((o) => o === 'completed')).toHaveLength(1);
    } finally {
      await h.queue.close();
    }
  });
});

/**
 * Puts a job with a payload that does not fit where the queue reads its jobs from: Redis written
 * as another (older, or broken) process would, or, in process, an object changed after its add.
 */
async function plantBadJob(
  kind: Kind,
  h: Harness<Payload>,
  definition: JobDefinition<Payload>,
): Promise<void> {
  if (!kind.redis) {
    const data: Payload = { group: 'A', n: 1 };
    await h.queue.add('bad', data);
    (data as unknown as { n: string }).n = 'changed';
    return;
  }
  if (!kind.fair) {
    const raw = new Queue(definition.name, { connection: { url: REDIS_URL }, prefix: h.prefix });
    try {
      await raw.add('job', { group: 'A', n: 'one' }, { jobId: 'bad', attempts: definition.attempts });
    } finally {
      await raw.close();
    }
    return;
  }
  const redis = new Redis(REDIS_URL);
  try {
    const base = `${h.prefix}:${definition.name}:fair:`;
    await redis.hset(`${base}jobs`, 'bad', JSON.stringify({ d: { group: 'A', n: 'one' }, t: Date.now() }));
    await redis.rpush(`${base}p:A`, 'bad');
    await redis.incr(`${base}waiting`);
    await redis.sadd(`${base}ringset`, 'A');
    await redis.rpush(`${base}ring`, 'A');
  } finally {
    redis.disconnect();
  }
}

describe.runIf(hasRedis)('the fair Redis queue reading back what is not a job', () => {
  it('fails an entry that is not JSON and goes on', async () => {
    const definition = job();
    const h = await open({ label: 'fair Redis', redis: true, fair: true }, definition);
    const ran: number[] = [];
    const redis = new Redis(REDIS_URL);
    try {
      const base = `${h.prefix}:${definition.name}:fair:`;
      await redis.hset(`${base}jobs`, 'garbage', '{not json');
      await redis.rpush(`${base}p:A`, 'garbage');
      await redis.sadd(`${base}ringset`, 'A');
      await redis.rpush(`${base}ring`, 'A');
      await h.queue.add('good', { group: 'A', n: 2 });
      h.queue.work(async (data) => {
        ran.push(data.n);
      }, 1);
      await until(() => ran.includes(2) && h.errors.length > 0, 'both settled', 20_000);
      expect(h.errors.map((e) => e.jobId)).toEqual(['garbage']);
      expect(h.errors[0]?.error).toBeInstanceOf(JobPayloadError);
      // Its entry is gone: it is not taken again.
      await until(async () => (await redis.hexists(`${base}jobs`, 'garbage')) === 0, 'the entry removed');
    } finally {
      redis.disconnect();
      await h.queue.close();
    }
  });
});

describe("the platform's catalogue", () => {
  it('declares each queue once, with a timeout and attempts', () => {
    const entries = Object.values(jobs);
    expect(new Set(entries.map((j) => j.name)).size).toBe(entries.length);
    for (const entry of entries) {
      expect(entry.timeoutMs).toBeGreaterThan(0);
      expect(entry.attempts).toBeGreaterThanOrEqual(1);
    }
  });

  it('accepts the jobs the modules queue, including ones queued before accountId existed', () => {
    expect(jobs.workflowExecution.problems({ executionId: 'e1', kind: 'start' })).toEqual([]);
    expect(
      jobs.workflowExecution.problems({
        executionId: 'e1',
        kind: 'resume',
        accountId: 'a1',
        resumeItems: [{ json: { a: 1 }, binary: { data: { data: 'AA==', mimeType: 'text/plain' } } }],
      }),
    ).toEqual([]);
    expect(jobs.workflowExecution.problems({ executionId: 'e1', kind: 'rerun' })).not.toEqual([]);
    expect(
      jobs.documentProcessing.problems({
        documentId: 'd1',
        accountId: 'a1',
        operations: ['chunk', 'embed'],
        chunkSize: 1000,
        chunkOverlap: 100,
        embeddingModel: 'local-embed',
        payerKeyId: null,
      }),
    ).toEqual([]);
    expect(jobs.documentProcessing.problems({ documentId: 'd1', accountId: 'a1' })).not.toEqual([]);
  });
});
