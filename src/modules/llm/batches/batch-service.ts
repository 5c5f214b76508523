/**
 * OpenAI's `/v1/batches`, per account: a batch is checked whole when it is created (its input file's
 * every line), then run on the job queue (`jobs.llmBatch`) by `BatchRunner`.
 */
import type { Principal } from '../../../core/auth/principal.js';
import { AppError } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import type { LlmBatchesTable } from '../tables.js';
import { BATCH_ENDPOINTS, type BatchEndpoint, parseBatchInput } from './batch-input.js';
import type { BatchStore } from './batch-store.js';
import type { FileStore } from './file-store.js';

const WINDOW_SECONDS = 24 * 3600;

/** Why a batch failed, in OpenAI's shape (stored as JSON on its row). */
interface BatchErrors {
  object: string;
  data: Array<{ code: string; message: string; param: string | null; line: number | null }>;
}

const times = (row: LlmBatchesTable) => ({
  created_at: row.created_at,
  in_progress_at: row.in_progress_at,
  expires_at: row.expires_at,
  finalizing_at: row.finalizing_at,
  completed_at: row.completed_at,
  failed_at: row.failed_at,
  expired_at: null,
  cancelling_at: row.cancelling_at,
  cancelled_at: row.cancelled_at,
});

export const batchView = (row: LlmBatchesTable) => ({
  id: row.id,
  object: 'batch' as const,
  endpoint: row.endpoint,
  errors: row.errors ? (JSON.parse(row.errors) as BatchErrors) : null,
  input_file_id: row.input_file_id,
  completion_window: row.completion_window,
  status: row.status,
  output_file_id: row.output_file_id,
  error_file_id: row.error_file_id,
  ...times(row),
  request_counts: { total: row.total, completed: row.completed, failed: row.failed },
  metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
});
export type BatchView = ReturnType<typeof batchView>;

const notFound = (id: string) => new AppError('NOT_FOUND', `No such Batch object: ${id}`, { id });
const invalid = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', `Invalid body: body.${field} ${message}`, {
    fields: [{ field: `body.${field}`, message }],
  });

export interface BatchCreate {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata?: Record<string, string> | null;
}

export class BatchService {
  constructor(
    private readonly batches: BatchStore,
    private readonly files: FileStore,
    private readonly enqueue: (batchId: string, accountId: string) => Promise<void>,
    /** Unix seconds. */
    private readonly now: () => number,
  ) {}

  async create(principal: Principal, body: BatchCreate): Promise<BatchView> {
    if (!(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint))
      throw invalid(
        'endpoint',
        `must be one of ${BATCH_ENDPOINTS.join(', ')} (the endpoints this gateway batches)`,
      );
    if (body.completion_window !== '24h') throw invalid('completion_window', 'must be "24h"');
    const file = await this.files.get(principal.accountId, body.input_file_id);
    if (!file)
      throw new AppError('NOT_FOUND', `No such File object: ${body.input_file_id}`, {
        id: body.input_file_id,
      });
    if (file.purpose !== 'batch')
      throw invalid('input_file_id', `names a file of purpose ${file.purpose}, not batch`);
    const data = await this.files.content(principal.accountId, file.id);
    // Checked whole (a bad line is a 400 now, not a failed batch later), its bodies not kept: the runner
    // reads the file again when it runs.
    const { count } = await parseBatchInput(
      (data ?? Buffer.alloc(0)).toString('utf8'),
      body.endpoint as BatchEndpoint,
      { keep: false },
    );
    const now = this.now();
    const row: LlmBatchesTable = {
      id: newId('batch'),
      account_id: principal.accountId,
      key_id: principal.keyId,
      endpoint: body.endpoint,
      input_file_id: file.id,
      completion_window: body.completion_window,
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      errors: null,
      metadata: body.metadata ? JSON.stringify(body.metadata) : null,
      total: count,
      completed: 0,
      failed: 0,
      created_at: now,
      in_progress_at: null,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      cancelling_at: null,
      cancelled_at: null,
      expires_at: now + WINDOW_SECONDS,
    };
    await this.batches.insert(row);
    await this.enqueue(row.id, row.account_id);
    return batchView(row);
  }

  async get(principal: Principal, id: string): Promise<BatchView> {
    const row = await this.batches.get(principal.accountId, id);
    if (!row) throw notFound(id);
    return batchView(row);
  }

  async list(principal: Principal, query: { limit?: number; after?: string; order?: 'asc' | 'desc' }) {
    const limit = query.limit ?? 20;
    const rows = await this.batches.list(principal.accountId, {
      limit,
      ...(query.after ? { after: query.after } : {}),
      ...(query.order ? { order: query.order } : {}),
    });
    const data = rows.slice(0, limit).map(batchView);
    return {
      object: 'list' as const,
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: rows.length > limit,
    };
  }

  /** A batch not started yet is cancelled at once; a running one is `cancelling` until its runner stops. */
  async cancel(principal: Principal, id: string): Promise<BatchView> {
    const row = await this.batches.get(principal.accountId, id);
    if (!row) throw notFound(id);
    const now = this.now();
    const moved =
      (await this.batches.transition(id, ['validating'], {
        status: 'cancelled',
        cancelling_at: now,
        cancelled_at: now,
      })) ||
      (await this.batches.transition(id, ['in_progress', 'finalizing'], {
        status: 'cancelling',
        cancelling_at: now,
      }));
    if (!moved && row.status !== 'cancelling' && row.status !== 'cancelled')
      throw new AppError('CONFLICT', `The batch is ${row.status}; it can no longer be cancelled`, {
        status: row.status,
      });
    return this.get(principal, id);
  }

  /** Batches a stopped process left unfinished run again (from their first line). */
  async recover(): Promise<number> {
    const rows = await this.batches.unfinished();
    for (const row of rows) await this.enqueue(row.id, row.account_id);
    return rows.length;
  }
}
