import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FairRedisQueue } from '../../src/core/queue/fair-redis-queue.js';
import { testJobs } from '../core/support/test-jobs.js';
import { until } from '../helpers/until.js';
import { type PrivateRedis, redisServerAvailable, startPrivateRedis } from './redis-server.js';

/**
 * Redis unreachable for longer than a lease while a job runs: the worker running it could not renew
 * its lease, but it is alive. When Redis answers again, the job must stay with it (no other worker
 * takes it, so it is not run twice or recorded as crashed), while a worker that really died still
 * loses its jobs one lease later (test/core/fair-queue.test.ts).
 *
 * The holder (a worker process of its own) is also stopped through the outage and resumed only after
 * the other worker has taken work, so the other worker's take, which reaps expired leases, always
 * comes first: without the grace after an outage it would take the held job.
 */

type Job = { group: string; name: string };
const runnable = await redisServerAvailable();
const redises: PrivateRedis[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  for (const redis of redises) await redis.close();
});

const LEASE_SECONDS = 4;
const PREFIX = 'long-outage';
const BASE = `${PREFIX}:jobs:fair:`;

describe.skipIf(!runnable)('the fair Redis queue through an outage longer than a lease', () => {
  it('keeps a running job with its live worker; another worker takes only new work', async () => {
    const redis = await startPrivateRedis();
    redises.push(redis);
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.resolve('test/core/support/fair-queue-holder.ts'),
        redis.url,
        PREFIX,
        String(LEASE_SECONDS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(holder);
    let out = '';
    holder.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const other = new FairRedisQueue<Job>({
      redisUrl: redis.url,
      prefix: PREFIX,
      job: testJobs.grouped,
      onError: () => {},
      fairness: { groupOf: (j) => j.group, perGroup: 1 },
      stallSeconds: LEASE_SECONDS,
      commandTimeoutMs: 500,
    });
    const ran: string[] = [];
    const probe = new Redis(redis.url);
    try {
      await until(() => out.includes('ready'), 'the holder', 30_000);
      await other.add('held', { group: 'A', name: 'held' });
      await until(() => out.includes('took held'), 'the holder to take the job');

      holder.kill('SIGSTOP');
      redis.pause();
      const pausedAt = Date.now();
      await until(() => Date.now() - pausedAt > 1.5 * LEASE_SECONDS * 1000, 'the outage', 20_000);
      redis.resume();
      // The other worker starts now, so its first take is answered (a take sent during the outage
      // times out on the client, and a job it leased would be lost to it, not run).
      other.work(async (job) => {
        ran.push(job.name);
      }, 1);

      // The other worker's first take after the outage: the held job's lease has expired by Redis's
      // clock, yet it must not be reaped while its worker has had no chance to renew it.
      await other.add('after', { group: 'B', name: 'after' });
      await until(() => ran.includes('after'), 'new work to run', 15_000);
      expect(ran).toEqual(['after']);

      holder.kill('SIGCONT');
      // A lease after the grace: a take reaping the held job (had it been reaped and re-leased while
      // the other worker's timed-out take was lost, or were the holder's renewals not kept) would
      // have run it here by then.
      const resumedAt = Date.now();
      await until(async () => (await probe.exists(`${BASE}grace`)) === 0, 'the grace to end', 15_000);
      await until(
        () => Date.now() - resumedAt > 1.5 * LEASE_SECONDS * 1000,
        'a lease after the outage',
        20_000,
      );
      await other.add('later', { group: 'B', name: 'later' });
      await until(() => ran.includes('later'), 'later work to run', 15_000);
      expect(ran).toEqual(['after', 'later']);
      expect(Number(await probe.zscore(`${BASE}leases`, 'A\nheld'))).toBeGreaterThan(0);
      expect(out.match(/took /g)).toHaveLength(1);
    } finally {
      holder.kill('SIGCONT');
      holder.kill('SIGKILL');
      probe.disconnect();
      await other.close();
    }
  });
});
