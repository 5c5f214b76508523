import { sql } from 'kysely';
import { type Clock, isoNow } from '../../../core/clock.js';
import { runList } from '../../../core/db/list.js';
import { AppError, assertNever, notFound, validationError } from '../../../core/errors.js';
import { encodeCursor, type ListQuery, parseListQuery, project } from '../../../core/http/list-query.js';
import { instant } from '../../../core/http/time-range.js';
import type { RunState } from '../engine/index.js';
import { n8nExecutionData } from './n8n-data.js';
import { EXECUTION_LIST_SPEC, type N8nExecutionStatus } from './n8n-schemas.js';
import { withoutResumeSignatures } from './resume-signature.js';
import type { ExecutionRunner, TriggerData } from './runner.js';
import { CRASH_MESSAGE, type ExecutionEntryRow, type ExecutionStore } from './store.js';

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

const stateOf = (row: { run_data?: string | null }) =>
  row.run_data ? (JSON.parse(row.run_data) as RunState) : null;

/** n8n's status names on the stored statuses (a crash is stored as an error saying so). */
function whereStatus<Q extends ReturnType<ExecutionStore['listQuery']>>(
  qb: Q,
  status: N8nExecutionStatus,
): Q {
  switch (status) {
    case 'crashed':
      return qb.where('status', '=', 'error').where('error_message', '=', CRASH_MESSAGE) as Q;
    case 'unknown':
      // n8n's status for a run it lost track of; the platform always knows (crashes are recorded).
      return qb.where(sql<boolean>`1 = 0`) as Q;
    case 'canceled':
    case 'error':
    case 'new':
    case 'running':
    case 'success':
    case 'waiting':
      return qb.where('status', '=', status) as Q;
    default:
      return assertNever(status);
  }
}

/** n8n's `annotationTags` filter: tag ids, comma-separated (or the parameter repeated). */
function tagIdsOf(value: unknown): string[] {
  const ids = (Array.isArray(value) ? value : [value])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (ids.length === 0 || ids.length > 100)
    throw validationError('annotationTags takes 1 to 100 tag ids, comma-separated', [
      { field: 'annotationTags', message: 'expected 1 to 100 tag ids' },
    ]);
  return ids;
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

/** Most run-data characters one `includeData` page carries (at least one execution's, whatever its size). */
const LIST_DATA_CHARS = 16_000_000;

export class ExecutionService {
  constructor(
    private readonly store: ExecutionStore,
    private readonly runner: ExecutionRunner,
    private readonly clock: Clock,
  ) {}

  /**
   * Newest first; `workflowId`, `status` (n8n's names), `mode`, `startedAfter`/`startedBefore`,
   * `annotationTags`, `limit` (20, max 250), `cursor`, and
   * `includeData` (n8n's: each entry with its run data). Run data may hold resume URLs, so
   * their signatures are blanked unless `withResumeUrl` (workflow:write).
   */
  async list(accountId: string, rawQuery: Record<string, unknown>, withResumeUrl = false) {
    const { includeData, annotationTags, ...rest } = rawQuery;
    const query = parseListQuery(rest, EXECUTION_LIST_SPEC);
    const { status, startedAfter, startedBefore, ...filters } = query.filters;
    const [after, before] = [instant('startedAfter', startedAfter), instant('startedBefore', startedBefore)];
    // The same filters on either select (the plain list's, or the sized one of `includeData`).
    const narrowed = <Q>(base: Q): Q => {
      let qb = base as unknown as ReturnType<ExecutionStore['listQuery']>;
      if (status !== undefined) qb = whereStatus(qb, status as N8nExecutionStatus);
      if (after) qb = qb.where('started_at', '>=', after);
      if (before) qb = qb.where('started_at', '<', before);
      if (annotationTags !== undefined) qb = this.store.whereTagged(qb, accountId, tagIdsOf(annotationTags));
      return qb as unknown as Q;
    };
    if (includeData !== true)
      return runList(
        narrowed(this.store.listQuery(accountId)),
        { ...query, filters },
        EXECUTION_LIST_SPEC,
        entry,
      );
    const page = await this.listWithData(accountId, narrowed(this.store.sizedListQuery(accountId)), {
      ...query,
      filters,
    });
    return withResumeUrl ? page : withoutResumeSignatures(page);
  }

  /**
   * n8n's `includeData` list: the page's entries are weighed first (their run data's size), and the
   * data is read and sent for as many as fit in LIST_DATA_CHARS (at least one); a page cut short ends
   * with the cursor of its last entry, so a client that follows cursors gets the rest. Without it a
   * page of 250 large runs was read, parsed and serialized whole on the event loop (seconds, GBs).
   */
  private async listWithData(
    accountId: string,
    base: ReturnType<ExecutionStore['sizedListQuery']>,
    query: ListQuery,
  ) {
    const sized = await runList(base, { ...query, fields: null }, EXECUTION_LIST_SPEC, (row) => row);
    let kept = 0;
    let chars = 0;
    for (const row of sized.data) {
      chars += Number(row.data_chars ?? 0);
      if (kept > 0 && chars > LIST_DATA_CHARS) break;
      kept++;
    }
    const rows = sized.data.slice(0, kept) as Array<ExecutionEntryRow & { data_chars: number | null }>;
    const last = rows.at(-1);
    const nextCursor =
      kept < sized.data.length && last
        ? encodeCursor({ sort: query.sort, order: query.order, value: last.id, id: last.id })
        : sized.nextCursor;
    const data = await this.store.dataOf(
      accountId,
      rows.map((r) => r.id),
    );
    const items = rows.map((row) => {
      const found = data.get(row.id);
      const { data_chars: _size, ...fields } = row;
      return {
        ...entry(fields),
        data: n8nExecutionData(stateOf(found ?? {}), found?.error_message ?? null),
      };
    });
    return { data: project(items, query.fields), nextCursor };
  }

  /**
   * `includeData`: with the run data in n8n's structure and the workflow as it ran (n8n's default:
   * without). `withResumeUrl`: the caller may act on the execution (workflow:write); a reader never gets it.
   */
  async get(accountId: string, id: string, options: { includeData?: boolean; withResumeUrl?: boolean } = {}) {
    const { includeData = false, withResumeUrl = false } = options;
    const row = await this.store.getFor(accountId, id);
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
    const state = stateOf(row);
    // The author sees the signed URL a waiting execution resumes on; a webhook caller never does, and
    // neither does a read-only key: holding the URL is the power to approve.
    const resumeUrl =
      withResumeUrl && row.status === 'waiting' && row.wait_till === null
        ? this.runner.resumeUrl(row.id, state?.waitIndex ?? 0)
        : null;
    const view = {
      ...entry(row),
      resumeUrl,
      ...(includeData
        ? {
            workflowData: await this.runner.definition(row.workflow_id, row.workflow_version),
            data: n8nExecutionData(state, row.error_message),
          }
        : {}),
    };
    return withResumeUrl ? view : withoutResumeSignatures(view);
  }

  async delete(accountId: string, id: string) {
    const shown = await this.store.getFor(accountId, id);
    if (!shown) throw notFound('EXECUTION_NOT_FOUND', 'Execution', id);
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

  /**
   * n8n's bulk stop: every execution of the account in one of `status` (n8n's `queued` is the
   * platform's `new`) that has not ended, of `workflowId` and started within the window when given,
   * becomes `canceled`. Answers how many were stopped (one that ended meanwhile is not counted).
   */
  async stopMany(
    accountId: string,
    body: {
      status: Array<'queued' | 'running' | 'waiting'>;
      workflowId?: string;
      startedAfter?: string;
      startedBefore?: string;
    },
  ): Promise<{ stopped: number }> {
    const instant = (field: 'startedAfter' | 'startedBefore'): string | undefined => {
      const value = body[field];
      if (value === undefined) return undefined;
      const at = new Date(value);
      if (Number.isNaN(at.getTime())) {
        throw new AppError('VALIDATION_ERROR', `${field} must be a date-time (ISO 8601)`, {
          field,
          value,
        });
      }
      return at.toISOString();
    };
    const ids = await this.store.stoppable(accountId, {
      statuses: [...new Set(body.status.map((s) => (s === 'queued' ? ('new' as const) : s)))],
      ...(body.workflowId !== undefined ? { workflowId: body.workflowId } : {}),
      ...optional('startedAfter', instant('startedAfter')),
      ...optional('startedBefore', instant('startedBefore')),
    });
    let stopped = 0;
    const at = isoNow(this.clock);
    for (const id of ids) {
      if (!(await this.store.stop(accountId, id, at, 'The execution was stopped'))) continue;
      await this.runner.stopped(id);
      stopped++;
    }
    return { stopped };
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
