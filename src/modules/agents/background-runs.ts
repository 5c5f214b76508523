import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { isAppError } from '../../core/errors.js';
import type { AgentStore, RunRow } from './agent-store.js';
import type { AgentMessenger, RunPrincipal } from './messaging.js';

/**
 * Takes-up of one background run: the first, and one more after its worker died mid-run (the turn
 * runs again from its start: its answer was not stored). A run found in progress past this is
 * marked failed, once: never lost, never run a third time.
 */
const MAX_TAKE_UPS = 2;
/** How often a running background turn reads its row, to stop when the run is cancelled. */
const CANCEL_POLL_MS = 500;
/** Runs recovered at boot, at most (oldest first); more are picked up at the next boot. */
const RECOVER_LIMIT = 10_000;

export interface BackgroundDeps {
  store: AgentStore;
  messenger: AgentMessenger;
  clock: Clock;
  /** The principal a run was started by, rebuilt (a key's current state: revoked keys fail). */
  principalOf(stored: RunPrincipal): Promise<Principal>;
  onUnexpected(error: unknown): void;
}

/** Background agent runs (`background: true`): the job queue's handler, and the recovery at boot. */
export class BackgroundRuns {
  constructor(private readonly deps: BackgroundDeps) {}

  /**
   * Runs one queued run. A run found in progress was cut short by its worker's death (the queue's
   * stalled-job check or a restart handed it over): it runs again, or fails once it has been taken
   * up MAX_TAKE_UPS times. Ended, paused and cancelled runs are left alone (a duplicate delivery).
   */
  async run(runId: string, accountId: string, jobSignal: AbortSignal): Promise<void> {
    const { store, clock } = this.deps;
    const row = await store.getRun(accountId, runId);
    if (row?.background !== 1) return;
    if (row.status !== 'queued' && row.status !== 'in_progress') return;
    if (row.status === 'in_progress' && row.attempts >= MAX_TAKE_UPS) {
      await this.fail(row, 'WORKER_CRASHED', `The worker running this run stopped ${row.attempts} times`);
      return;
    }
    // Of two workers handed the same run, one takes it up.
    if (!(await store.claimRun(row.id, row.status, row.attempts, clock.now().toISOString()))) return;
    const claimed: RunRow = { ...row, status: 'in_progress', attempts: row.attempts + 1 };
    let principal: Principal;
    try {
      principal = await this.deps.principalOf(JSON.parse(row.principal ?? 'null') as RunPrincipal);
    } catch (error) {
      const message = isAppError(error) ? error.message : 'Its key or member no longer exists';
      await this.fail(claimed, 'FORBIDDEN', `The run's principal cannot run it: ${message}`);
      return;
    }
    const controller = new AbortController();
    const stop = () => controller.abort(jobSignal.reason);
    jobSignal.addEventListener('abort', stop, { once: true });
    const watch = setInterval(() => {
      store.getRun(accountId, runId).then((now) => {
        if (now?.status === 'cancelled') controller.abort(new Error('cancelled'));
      }, this.deps.onUnexpected);
    }, CANCEL_POLL_MS);
    try {
      const turn = await this.deps.messenger.stored(principal, claimed);
      const events = turn.run(controller.signal);
      // Nobody listens to a background turn's events: its outcome is on the run (and the conversation).
      for (let next = await events.next(); !next.done; next = await events.next());
    } catch (error) {
      // The turn recorded its failure on the run (drive); only what is not the platform's is logged.
      if (!isAppError(error) && !controller.signal.aborted) this.deps.onUnexpected(error);
      // A failure before the turn started (its agent deleted) leaves the run in_progress: end it.
      await this.fail(claimed, isAppError(error) ? error.code : 'INTERNAL_ERROR', messageOf(error));
    } finally {
      clearInterval(watch);
      jobSignal.removeEventListener('abort', stop);
    }
  }

  /** Background runs unfinished at the last stop, queued again (a running one's job is a no-op add). */
  async recover(enqueue: (runId: string, accountId: string) => Promise<void>): Promise<number> {
    const rows = await this.deps.store.unfinishedBackgroundRuns(RECOVER_LIMIT);
    for (const row of rows) await enqueue(row.id, row.account_id);
    return rows.length;
  }

  /** Marks an in-progress run failed (a no-op when it has ended meanwhile). */
  private async fail(row: RunRow, code: string, message: string): Promise<void> {
    await this.deps.store.moveRun(row.id, ['in_progress'], {
      status: 'failed',
      state: null,
      pending: null,
      error: JSON.stringify({ code, message }),
      updated_at: this.deps.clock.now().toISOString(),
    });
  }
}

const messageOf = (error: unknown): string =>
  isAppError(error) ? error.message : 'The agent failed mid-answer';
