import type { FastifyBaseLogger } from 'fastify';
import { type Clock, isoNow } from '../../core/clock.js';
import type { JobQueue } from '../../core/queue/index.js';
import type { DeliveryStore } from './delivery-store.js';
import type { ExecutionJob } from './execution-runner.js';
import type { ExecutionStore } from './execution-store.js';

export interface MaintenanceDeps {
  executions: ExecutionStore;
  deliveries: DeliveryStore;
  queue: JobQueue<ExecutionJob>;
  clock: Clock;
  log: FastifyBaseLogger;
  maxAgeDays: number;
  maxCount: number;
  dedupeHours: number;
}

/**
 * What a worker process does besides running jobs: recovery after a crash, resuming timed waits,
 * pruning old executions and deliveries.
 */
export class Maintenance {
  constructor(private readonly deps: MaintenanceDeps) {}

  /**
   * After a restart: executions accepted but not started run now; with the in-process queue,
   * ones that were running died with the process: recorded as crashed, or waiting to resume from
   * their checkpoint (a retry's wait, a sub-workflow call).
   */
  async recover(): Promise<{ requeued: number; resumed: number; crashed: number }> {
    const { executions, queue } = this.deps;
    let marked = { resumed: 0, crashed: 0 };
    if (queue.kind === 'memory') {
      const running = await executions.idsWithStatus('running');
      marked = await executions.markCrashed(running, isoNow(this.deps.clock));
    }
    const queued = await executions.withStatus('new');
    // Re-adding is safe with Redis too: the job id is the execution id.
    for (const { id, account_id } of queued)
      await queue.add(id, { executionId: id, kind: 'start', accountId: account_id });
    return { requeued: queued.length, ...marked };
  }

  /** Queues resumes of waits whose time has come; the claim in the runner makes repeats harmless. */
  async resumeDue(): Promise<number> {
    const due = await this.deps.executions.dueWaits(isoNow(this.deps.clock), 500);
    for (const { id, account_id, wait_till } of due) {
      await this.deps.queue.add(`${id}:resume:${wait_till}`, {
        executionId: id,
        kind: 'resume',
        accountId: account_id,
      });
    }
    return due.length;
  }

  async prune(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    const before = new Date(now - this.deps.maxAgeDays * 86_400_000).toISOString();
    const removed = await this.deps.executions.prune(before, this.deps.maxCount);
    await this.deps.deliveries.prune(new Date(now - this.deps.dedupeHours * 3_600_000).toISOString());
    if (removed > 0) this.deps.log.info({ removed }, 'pruned old executions');
    return removed;
  }

  /** Runs the periodic parts until the returned stop function is called. */
  schedule(pruneEverySeconds: number): () => void {
    const guard = (what: string, fn: () => Promise<unknown>) => () => {
      fn().catch((err: unknown) => this.deps.log.error({ err }, `workflow maintenance: ${what} failed`));
    };
    const waits = setInterval(
      guard('resume', () => this.resumeDue()),
      1_000,
    );
    const prune = setInterval(
      guard('prune', () => this.prune()),
      pruneEverySeconds * 1_000,
    );
    waits.unref();
    prune.unref();
    return () => {
      clearInterval(waits);
      clearInterval(prune);
    };
  }
}
