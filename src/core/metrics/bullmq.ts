import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';

/** BullMQ's job states worth watching; completed jobs are removed at once (core/queue/bullmq-queue.ts). */
const STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

interface BullCollectorOptions {
  redis: Redis;
  /** QUEUE_PREFIX: the queues' keys, as the platform's queues name them. */
  prefix: string;
  queues: readonly string[];
  log: FastifyBaseLogger;
}

/**
 * Jobs held in Redis by each shared queue, as BullMQ counts them: the queue as every worker sees
 * it (a job a dead worker left shows as `active` until BullMQ's stalled check moves it). Reads
 * over the platform's own Redis client (a queue handle needs no blocking connection). Returns the
 * closer of the queue handles. BullMQ loads only here, when Redis is configured.
 */
export async function registerBullCollector(
  registry: Registry,
  options: BullCollectorOptions,
): Promise<() => Promise<void>> {
  const { Queue } = await import('bullmq');
  const queues = options.queues.map(
    (name) => new Queue(name, { connection: options.redis, prefix: options.prefix }),
  );
  new Gauge({
    name: 'platform_bullmq_jobs',
    help: 'Jobs of each shared (BullMQ) queue in Redis, by state',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const counts = await Promise.all(queues.map((q) => q.getJobCounts(...STATES)));
        queues.forEach((q, i) => {
          for (const state of STATES) this.set({ queue: q.name, state }, counts[i]?.[state] ?? 0);
        });
      } catch (err) {
        options.log.warn({ err }, 'metrics: reading the BullMQ queues failed');
      }
    },
  });
  return async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
  };
}
