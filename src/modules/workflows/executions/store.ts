import { sql } from 'kysely';
import type { Db } from '../../../core/db/database.js';
import type { ExecutionsTable, StoredExecutionStatus } from '../tables.js';

export type ExecutionRow = ExecutionsTable;

/** Columns of the list (no run data: it may be large). */
const ENTRY_COLUMNS = [
  'id',
  'account_id',
  'workflow_id',
  'workflow_version',
  'mode',
  'status',
  'finished',
  'retry_of',
  'wait_till',
  'started_at',
  'stopped_at',
] as const;

export type ExecutionEntryRow = Pick<ExecutionRow, (typeof ENTRY_COLUMNS)[number]> &
  Partial<Pick<ExecutionRow, 'run_data' | 'error_message'>>;

/** What a run cut off by a crash is recorded with; n8n's `crashed` status filter selects on it. */
export const CRASH_MESSAGE = 'The process running this execution stopped (crashed) before it finished';

/** What an execution canceled for want of the queue is recorded with (its caller got 503). */
export const QUEUE_OUTAGE_MESSAGE =
  'Not started: the job queue (Redis) was unreachable, so its caller was answered 503 and may retry';

export interface ExecutionResult {
  status: StoredExecutionStatus;
  run_data: string;
  error_message: string | null;
  response: string | null;
  wait_till: string | null;
  stopped_at: string | null;
}

export class ExecutionStore {
  constructor(private readonly db: Db) {}

  /**
   * The list's rows with the size of each one's run data (characters), not the data: a page of
   * `includeData` is weighed before any data is read (ExecutionService.list).
   */
  sizedListQuery(accountId: string) {
    return this.db
      .selectFrom('executions')
      .select([...ENTRY_COLUMNS, sql<number | null>`length(run_data)`.as('data_chars')])
      .where('account_id', '=', accountId);
  }

  /** The run data and error of some of an account's executions, by id. */
  async dataOf(accountId: string, ids: string[]) {
    if (ids.length === 0) return new Map<string, { run_data: string | null; error_message: string | null }>();
    const rows = await this.db
      .selectFrom('executions')
      .select(['id', 'run_data', 'error_message'])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, { run_data: r.run_data, error_message: r.error_message }]));
  }

  /** The list's rows; `withData` adds the run data (n8n's `includeData`). */
  listQuery(accountId: string, withData = false) {
    const columns = withData
      ? [...ENTRY_COLUMNS, 'run_data' as const, 'error_message' as const]
      : ENTRY_COLUMNS;
    return this.db.selectFrom('executions').select(columns).where('account_id', '=', accountId);
  }

  /** Narrows a list to the executions carrying any of the tags (n8n's `annotationTags`). */
  whereTagged<Q extends ReturnType<ExecutionStore['listQuery']>>(
    qb: Q,
    accountId: string,
    tagIds: string[],
  ): Q {
    return qb.where(
      'id',
      'in',
      this.db
        .selectFrom('execution_tags')
        .select('execution_id')
        .where('account_id', '=', accountId)
        .where('tag_id', 'in', tagIds),
    ) as Q;
  }

  async insert(row: ExecutionRow): Promise<void> {
    await this.db.insertInto('executions').values(row).execute();
  }

  async get(id: string): Promise<ExecutionRow | undefined> {
    return this.db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getFor(accountId: string, id: string): Promise<ExecutionRow | undefined> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** Moves an execution from one status to `running` and returns it; undefined if another worker took it. */
  async claim(id: string, from: StoredExecutionStatus): Promise<ExecutionRow | undefined> {
    return (
      this.db
        .updateTable('executions')
        // A waiting run's time is spent; on a running row `wait_till` marks a checkpoint (below).
        .set({ status: 'running', wait_till: null })
        .where('id', '=', id)
        .where('status', '=', from)
        .returningAll()
        .executeTakeFirst()
    );
  }

  /** Stores a run's outcome; a run stopped meanwhile stays stopped (false). */
  async finish(id: string, result: ExecutionResult): Promise<boolean> {
    const done = await this.db
      .updateTable('executions')
      .set({ ...result, finished: result.status === 'success' ? 1 : 0 })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  }

  /** Stops an execution that has not ended (new, running or waiting); false if it had. */
  async stop(accountId: string, id: string, at: string, message: string): Promise<boolean> {
    const done = await this.db
      .updateTable('executions')
      .set({ status: 'canceled', finished: 0, wait_till: null, stopped_at: at, error_message: message })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('status', 'in', ['new', 'running', 'waiting'])
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  }

  /**
   * Ids of an account's executions in one of `statuses` that have not ended, for a bulk stop
   * (n8n's `POST /executions/stop`), optionally of one workflow and started within a window.
   */
  async stoppable(
    accountId: string,
    filter: {
      statuses: Array<'new' | 'running' | 'waiting'>;
      workflowId?: string;
      startedAfter?: string;
      startedBefore?: string;
    },
  ): Promise<string[]> {
    let q = this.db
      .selectFrom('executions')
      .select('id')
      .where('account_id', '=', accountId)
      .where('status', 'in', filter.statuses);
    if (filter.workflowId !== undefined) q = q.where('workflow_id', '=', filter.workflowId);
    if (filter.startedAfter !== undefined) q = q.where('started_at', '>', filter.startedAfter);
    if (filter.startedBefore !== undefined) q = q.where('started_at', '<', filter.startedBefore);
    return (await q.orderBy('id').execute()).map((r) => r.id);
  }

  async setResponse(id: string, response: string): Promise<void> {
    await this.db.updateTable('executions').set({ response }).where('id', '=', id).execute();
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('executions')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('status', 'not in', ['new', 'running'])
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async idsWithStatus(status: StoredExecutionStatus): Promise<string[]> {
    return (await this.withStatus(status)).map((r) => r.id);
  }

  /** Ids with their accounts (a queued job names its account: the queue is fair by account). */
  async withStatus(status: StoredExecutionStatus): Promise<Array<{ id: string; account_id: string }>> {
    return this.db
      .selectFrom('executions')
      .select(['id', 'account_id'])
      .where('status', '=', status)
      .execute();
  }

  /** Executions cut off by a crash: recorded as errors so they can be retried. */
  /**
   * A durable resume point of a running execution: its run so far and when to go on. Recovery turns a
   * checkpointed running row into a waiting one (resumed by the due-waits poll) instead of a crash.
   */
  async checkpoint(id: string, runData: string, resumeAt: string): Promise<void> {
    await this.db
      .updateTable('executions')
      .set({ run_data: runData, wait_till: resumeAt })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  async clearCheckpoint(id: string): Promise<void> {
    await this.db
      .updateTable('executions')
      .set({ wait_till: null })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  /**
   * Running executions whose process died: a checkpointed one waits to resume from its checkpoint,
   * the others are recorded as crashed. Returns how many of each.
   */
  async markCrashed(ids: string[], at: string): Promise<{ resumed: number; crashed: number }> {
    if (ids.length === 0) return { resumed: 0, crashed: 0 };
    const resumed = await this.db
      .updateTable('executions')
      .set({ status: 'waiting' })
      .where('id', 'in', ids)
      .where('status', '=', 'running')
      .where('wait_till', 'is not', null)
      .executeTakeFirst();
    const crashed = await this.db
      .updateTable('executions')
      .set({
        status: 'error',
        finished: 0,
        error_message: CRASH_MESSAGE,
        stopped_at: at,
      })
      .where('id', 'in', ids)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return { resumed: Number(resumed.numUpdatedRows), crashed: Number(crashed.numUpdatedRows) };
  }

  async dueWaits(
    now: string,
    limit: number,
  ): Promise<Array<{ id: string; account_id: string; wait_till: string }>> {
    const rows = await this.db
      .selectFrom('executions')
      .select(['id', 'account_id', 'wait_till'])
      .where('status', '=', 'waiting')
      .where('wait_till', 'is not', null)
      .where('wait_till', '<=', now)
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, account_id: r.account_id, wait_till: r.wait_till as string }));
  }

  /** Removes finished executions older than `before`, then all but the newest `keep`. */
  async prune(before: string, keep: number): Promise<number> {
    const done = ['success', 'error', 'canceled'] as const;
    const old = await this.db
      .deleteFrom('executions')
      .where('started_at', '<', before)
      .where('status', 'in', done)
      .executeTakeFirst();
    const cutoff = await this.db
      .selectFrom('executions')
      .select('id')
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1)
      .executeTakeFirst();
    let extra = 0n;
    if (cutoff) {
      const result = await this.db
        .deleteFrom('executions')
        .where('id', '<=', cutoff.id)
        .where('status', 'in', done)
        .executeTakeFirst();
      extra = result.numDeletedRows;
    }
    return Number(old.numDeletedRows) + Number(extra);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('executions')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Where executions stand, for waiters that may have missed the news (a Redis outage). */
  async outcomes(ids: string[]): Promise<Array<Pick<ExecutionRow, 'id' | 'status' | 'response'>>> {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('executions')
      .select(['id', 'status', 'response'])
      .where('id', 'in', ids)
      .execute();
  }

  /**
   * Cancels an execution no worker has taken (still `new`), so a job of it that reaches the queue
   * late runs nothing; false when a worker took it first (or it is gone).
   */
  async cancelUnstarted(id: string, at: string, message: string): Promise<boolean> {
    const done = await this.db
      .updateTable('executions')
      .set({ status: 'canceled', finished: 0, stopped_at: at, error_message: message })
      .where('id', '=', id)
      .where('status', '=', 'new')
      .executeTakeFirst();
    return Number(done.numUpdatedRows) > 0;
  }
}
