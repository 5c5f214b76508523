import { type Clock, isoNow } from '../../core/clock.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import type { RunState } from './engine/index.js';
import type { ExecutionRunner, TriggerData } from './execution-runner.js';
import type { ExecutionEntryRow, ExecutionStore } from './execution-store.js';
import { withoutResumeSignatures } from './resume-signature.js';
import { EXECUTION_STATUSES } from './schemas.js';

const EXECUTION_LIST_SPEC: ListSpec = {
  columns: { workflowId: 'workflow_id', status: 'status' },
  sortable: ['id'],
  filters: { workflowId: 'string', status: EXECUTION_STATUSES },
  projectable: [
    'id',
    'workflowId',
    'finished',
    'mode',
    'status',
    'startedAt',
    'stoppedAt',
    'retryOf',
    'waitTill',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 20,
  maxLimit: 250,
};

const entry = (row: ExecutionEntryRow) => ({
  id: row.id,
  workflowId: row.workflow_id,
  finished: row.finished === 1,
  mode: row.mode,
  status: row.status,
  startedAt: row.started_at,
  stoppedAt: row.stopped_at,
  retryOf: row.retry_of,
  waitTill: row.wait_till,
});

export class ExecutionService {
  constructor(
    private readonly store: ExecutionStore,
    private readonly runner: ExecutionRunner,
    private readonly clock: Clock,
  ) {}

  /** Newest first; `workflowId`, `status`, `limit` (20, max 250) and `cursor`. */
  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, EXECUTION_LIST_SPEC);
    return runList(this.store.listQuery(accountId), query, EXECUTION_LIST_SPEC, entry);
  }

  /** `withResumeUrl`: the caller may act on the execution (workflow:write); a reader never gets it. */
  async get(accountId: string, id: string, withResumeUrl = false) {
    const row = await this.store.getFor(accountId, id);
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
    const state = row.run_data ? (JSON.parse(row.run_data) as RunState) : null;
    const workflowData = await this.runner.definition(row.workflow_id, row.workflow_version);
    // The author sees the signed URL a waiting execution resumes on; a webhook caller never does, and
    // neither does a read-only key: holding the URL is the power to approve.
    const resumeUrl =
      withResumeUrl && row.status === 'waiting' && row.wait_till === null
        ? this.runner.resumeUrl(row.id, state?.waitIndex ?? 0)
        : null;
    const view = {
      ...entry(row),
      resumeUrl,
      workflowData,
      data: {
        runData: state?.runData ?? {},
        lastNodeExecuted: state?.lastNodeExecuted ?? null,
        error: state?.error ?? (row.error_message ? { message: row.error_message } : null),
      },
    };
    return withResumeUrl ? view : withoutResumeSignatures(view);
  }

  async delete(accountId: string, id: string) {
    const shown = await this.get(accountId, id);
    if (shown.status === 'new' || shown.status === 'running') {
      throw new AppError(
        'CONFLICT',
        `Execution '${id}' is ${shown.status}; stop it first (POST /api/v1/executions/${id}/stop)`,
        { id },
      );
    }
    await this.store.delete(accountId, id);
    return { id, deleted: true as const };
  }

  /**
   * Stops an execution that has not ended — queued, running (its result is then dropped) or
   * waiting — as `canceled`, so it can be deleted or retried.
   */
  async stop(accountId: string, id: string) {
    const row = await this.store.getFor(accountId, id);
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
    const stopped = await this.store.stop(accountId, id, isoNow(this.clock), 'The execution was stopped');
    if (!stopped) {
      const now = await this.store.getFor(accountId, id);
      throw new AppError('CONFLICT', `Execution '${id}' has already ended (${now?.status ?? 'deleted'})`, {
        id,
        status: now?.status ?? null,
      });
    }
    await this.runner.stopped(id);
    const after = await this.store.getFor(accountId, id);
    if (!after) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
    return entry(after);
  }

  /** A new execution (mode `retry`) of a failed or stopped one, from the same trigger data and workflow version. */
  async retry(accountId: string, id: string) {
    const row = await this.store.getFor(accountId, id);
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
    if (row.status !== 'error' && row.status !== 'canceled') {
      throw new AppError(
        'CONFLICT',
        `Only failed or stopped executions can be retried; this one is ${row.status}`,
        {
          id,
          status: row.status,
        },
      );
    }
    const trigger = JSON.parse(row.trigger_data) as TriggerData;
    const newId = await this.runner.enqueue({
      accountId,
      workflowId: row.workflow_id,
      version: row.workflow_version,
      mode: 'retry',
      trigger: { nodeName: trigger.nodeName, items: trigger.items },
      retryOf: row.id,
    });
    const created = await this.store.getFor(accountId, newId);
    if (!created) throw new Error('retry execution vanished');
    return entry(created);
  }
}
