import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FairRedisQueue } from '../../src/core/queue/fair-redis-queue.js';
import type { JobQueue } from '../../src/core/queue/index.js';
import { MemoryQueue } from '../../src/core/queue/memory-queue.js';
import { deleteRedisPrefixes } from '../helpers/platform.js';
import { REDIS_URL, redisAvailable, uniqueName } from '../helpers/services.js';
import { testJobs } from './support/test-jobs.js';

/**
 * The fair queues on their own: round-robin by group, at most `perGroup` running per group, and with
 * Redis a slot held by a process that dies comes back when its lease expires.
 */
type Job = { group: string; name: string };
const hasRedis = await redisAvailable();
const prefixes: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await deleteRedisPrefixes(prefixes);
});

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const kinds: Array<{ label: string; make: (perGroup: number) => JobQueue<Job> }> = [
  {
    label: 'in-process',
    make: (perGroup) =>
      new MemoryQueue<Job>({
        job: testJobs.grouped,
        onError: () => {},
        fairness: { groupOf: (j) => j.group, perGroup },
      }),
  },
];
if (hasRedis)
  kinds.push({
    label: 'Redis',
    make: (perGroup) => {
      const prefix = uniqueName('fq');
      prefixes.push(prefix);
      return new FairRedisQueue<Job>({
        redisUrl: REDIS_URL,
        prefix,
        job: testJobs.grouped,
        onError: () => {},
        fairness: { groupOf: (j) => j.group, perGroup },
      });
    },
  });

describe.each(kinds)('the fair queue ($label)', ({ make }) => {
  it('serves groups round-robin: one job of each waiting group in turn', async () => {
    const queue = make(2);
    const started: string[] = [];
    const gates: Array<() => void> = [];
    try {
      // A's six jobs first, then B's three; one slot.
      for (let i = 1; i <= 6; i++) await queue.add(`a${i}`, { group: 'A', name: `A${i}` });
      for (let i = 1; i <= 3; i++) await queue.add(`b${i}`, { group: 'B', name: `B${i}` });
      expect(await queue.waiting()).toBe(9);
      queue.work(async (job) => {
        started.push(job.name);
        await new Promise<void>((resolve) => gates.push(resolve));
      }, 1);
      while (started.length < 9) {
        const count = started.length;
        await until('a running job', () => gates.length > 0);
        gates.shift()?.();
        await until('the next start', () => started.length > count);
      }
      expect(started).toEqual(['A1', 'B1', 'A2', 'B2', 'A3', 'B3', 'A4', 'A5', 'A6']);
    } finally {
      for (const gate of gates.splice(0)) gate();
      await queue.close();
    }
  });

  it('runs at most perGroup jobs of one group however many slots are free', async () => {
    const queue = make(2);
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    try {
      queue.work(async (job) => {
        started.push(job.name);
        await new Promise<void>((resolve) => gates.set(job.name, resolve));
      }, 10);
      for (let i = 1; i <= 6; i++) await queue.add(`a${i}`, { group: 'A', name: `A${i}` });
      await queue.add('b1', { group: 'B', name: 'B1' });
      await until('A at its cap and B started', () => started.length === 3);
      expect([...started].sort()).toEqual(['A1', 'A2', 'B1']);
      expect(await queue.waiting()).toBe(4);
      // An A job ends: the next A job takes its slot, no more.
      gates.get('A1')?.();
      await until('A3', () => started.includes('A3'));
      expect(started).toHaveLength(4);
      expect(await queue.waiting()).toBe(3);
    } finally {
      for (const gate of gates.values()) gate();
      await queue.close();
    }
  });
});

describe.skipIf(!hasRedis)('the fair Redis queue across processes', () => {
  it("a killed worker's leases and share expire: its job runs elsewhere, within the account's cap", async () => {
    const prefix = uniqueName('fq');
    prefixes.push(prefix);
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', path.resolve('test/core/support/fair-queue-holder.ts'), REDIS_URL, prefix],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(holder);
    let out = '';
    holder.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await until('the holder', () => out.includes('ready'));
    const queue = new FairRedisQueue<Job>({
      redisUrl: REDIS_URL,
      prefix,
      job: testJobs.grouped,
      onError: () => {},
      fairness: { groupOf: (j) => j.group, perGroup: 1 },
      stallSeconds: 2,
    });
    const gates = new Map<string, () => void>();
    try {
      await queue.add('held', { group: 'A', name: 'held' });
      await until('the holder took the job', () => out.includes('took held'));
      const ran: string[] = [];
      queue.work(async (job) => {
        ran.push(job.name);
        if (job.group === 'A') await new Promise<void>((resolve) => gates.set(job.name, resolve));
      }, 5);
      // Two live workers, 1 each: A may run 2 in all — the holder's and one here; B has its own.
      await queue.add('next', { group: 'A', name: 'next' });
      await queue.add('third', { group: 'A', name: 'third' });
      await queue.add('other', { group: 'B', name: 'other' });
      await until('next and other ran', () => ran.includes('next') && ran.includes('other'));
      expect(await queue.waiting()).toBe(1);
      expect(ran).not.toContain('third');
      const killedAt = Date.now();
      holder.kill('SIGKILL');
      // The holder's heartbeat and lease (2 s) expire: one worker left, so A's cap is 1 and 'next'
      // holds it; once it ends, the held job (back at the front of A) runs here, then 'third'.
      // The held job is back in A's list (2 waiting), not run: A's one slot is taken.
      for (let end = Date.now() + 15_000; (await queue.waiting()) < 2; ) {
        if (Date.now() > end) throw new Error('the held lease did not expire');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(ran).not.toContain('held');
      gates.get('next')?.();
      await until('held', () => ran.includes('held'), 15_000);
      expect(ran).not.toContain('third');
      gates.get('held')?.();
      await until('third', () => ran.includes('third'), 15_000);
      expect(ran.slice(0, 2).sort()).toEqual(['next', 'other']);
      expect(ran.slice(2)).toEqual(['held', 'third']);
    } finally {
      for (const gate of gates.values()) gate();
      if (holder.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL');
      await queue.close();
    }
  });
});
