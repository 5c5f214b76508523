import { type Clock, isoNow } from '../../../core/clock.js';
import { dependencyFault } from '../../../core/db/faults.js';
import type { JobQueue } from '../../../core/queue/index.js';
import type { DeliveryStore } from '../webhooks/delivery-store.js';
import type { Log } from './log.js';
import type { ExecutionJob } from './runner.js';
import type { ExecutionStore } from './store.js';

export interface MaintenanceDeps {
  executions: ExecutionStore;
  deliveries: DeliveryStore;
  queue: JobQueue<ExecutionJob>;
  clock: Clock;
  log: Log;
  maxAgeDays: number;
  maxCount: number;
  dedupeHours: number;
  /** The runner's job handler: a job a dependency's fault interrupted is handed to it again. */
  rerun?: (job: ExecutionJob) => Promise<void>;
  /** The jobs a fault interrupted, as the queue's error hook noted them (shared with the queue). */
  interrupted?: InterruptedJobs;
}

/**
 * Executions whose job failed because the database (or its disk) or Redis was down, by execution
 * id: the queue's error hook notes them, maintenance takes them up again once the fault is over.
 */
export class InterruptedJobs {
  readonly byExecution = new Map<string, ExecutionJob['kind']>();

  /** Remembers a job a dependency's fault interrupted; false for any other failure. */
  note(error: unknown, jobId: string): boolean {
    if (!dependencyFault(error)) return false;
    // Job ids: the execution id for a start, `<id>:resume:…` for a resume.
    const [executionId, resume] = jobId.split(':');
    if (!executionId) return false;
    if (!this.byExecution.has(executionId)) this.byExecution.set(executionId, resume ? 'resume' : 'start');
    return true;
  }
}

/** How often jobs interrupted by a fault are tried again while some are left (disk full, Redis). */
const INTERRUPTED_RETRY_MS = 2_000;

/**
 * What a worker process does besides running jobs: recovery after a crash, resuming timed waits,
 * pruning old executions and deliveries.
 */
export class Maintenance {
  /** Executions whose job failed because the database (or its disk) was down, by execution id. */
  private readonly interrupted: Map<string, ExecutionJob['kind']>;
  private readonly jobs: InterruptedJobs;
  private retrying: Promise<number> | null = null;

  constructor(private readonly deps: MaintenanceDeps) {
    this.jobs = deps.interrupted ?? new InterruptedJobs();
    this.interrupted = this.jobs.byExecution;
  }

  /**
   * The queue's error hook: a job that failed because a dependency was down is remembered and run
   * again once it is back (`retryInterrupted`). Its execution was left `new` (the claim failed),
   * `running` (the outcome could not be stored) or `waiting`. Returns whether it was remembered.
   */
  noteFailure(error: unknown, jobId: string): boolean {
    if (!this.deps.rerun) return false;
    return this.jobs.note(error, jobId);
  }

  /** How many interrupted executions wait to be taken up again. */
  get interruptedCount(): number {
    return this.interrupted.size;
  }

  /**
   * Takes up the executions whose jobs a fault interrupted: a `new` one runs now, a `waiting` one
   * resumes, and a `running` one nobody runs any more goes through the runner's own recovery of a job
   * seen twice (resumed from its checkpoint, else recorded crashed, and its waiting caller told).
   * One pass at a time; one that fails on the fault again stays for the next pass.
   */
  retryInterrupted(): Promise<number> {
    this.retrying ??= this.retryPass().finally(() => {
      this.retrying = null;
    });
    return this.retrying;
  }

  private async retryPass(): Promise<number> {
    const rerun = this.deps.rerun;
    if (!rerun) return 0;
    let done = 0;
    for (const [executionId, kind] of [...this.interrupted]) {
      try {
        const row = await this.deps.executions.get(executionId);
        const status = row?.status;
        if (status === 'new') await rerun({ executionId, kind: 'start' });
        else if (status === 'waiting' && kind === 'resume') await rerun({ executionId, kind: 'resume' });
        // A start job seen again on a running row that no process runs: the runner records it.
        else if (status === 'running') await rerun({ executionId, kind: 'start' });
        this.interrupted.delete(executionId);
        done++;
      } catch (err) {
        if (!dependencyFault(err)) {
          this.interrupted.delete(executionId);
          this.deps.log.error({ err, executionId }, 'interrupted execution could not be taken up');
        }
        // Still down: kept for the next pass.
        else break;
      }
    }
    if (done > 0)
      this.deps.log.info({ executions: done }, 'executions interrupted by a fault taken up again');
    return done;
  }

  /**
   * The database answers again after it was lost: interrupted jobs are taken up, and executions
   * stored but never queued (their insert committed while the answer to it was lost) are queued.
   * Running executions of other processes are left alone: their own process takes them up.
   */
  async afterReconnect(): Promise<void> {
    await this.retryInterrupted();
    const { executions, queue } = this.deps;
    const queued = await executions.idsWithStatus('new');
    for (const id of queued) await queue.add(id, { executionId: id, kind: 'start' });
  }

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
    const interrupted = setInterval(() => {
      if (this.interrupted.size > 0) guard('retry interrupted', () => this.retryInterrupted())();
    }, INTERRUPTED_RETRY_MS);
    waits.unref();
    prune.unref();
    interrupted.unref();
    return () => {
      clearInterval(waits);
      clearInterval(prune);
      clearInterval(interrupted);
    };
  }
}
