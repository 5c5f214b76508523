/**
 * Runs one batch on the job queue: each line of its input file is answered as the same request on its
 * own would be (the key's models, token budget and request log), a few at a time; answers go to the
 * output file, failures to the error file, both JSONL in OpenAI's shape. A cancel is seen between lines
 * and ends the requests under way.
 */
import type { Principal } from '../../../core/auth/principal.js';
import { AppError } from '../../../core/errors.js';
import { errorBody } from '../../../core/http/error-handler.js';
import { newId } from '../../../core/ids.js';
import type { Gateway } from '../gateway.js';
import type { LlmBatchesTable } from '../tables.js';
import { type BatchEndpoint, type BatchLine, parseBatchInput } from './batch-input.js';
import { lineCall } from './batch-line-call.js';
import type { BatchStore } from './batch-store.js';
import type { FileStore } from './file-store.js';

/** Requests of one batch under way at once. */
const LINE_CONCURRENCY = 4;
/** Output beyond this is not kept: later answers become errors saying so (the file is held in memory). */
export const MAX_OUTPUT_BYTES = 100 * 1024 * 1024;
/** How often progress is written and a cancel looked for, at most. */
const CHECK_MS = 250;

export interface BatchRunnerDeps {
  batches: BatchStore;
  files: FileStore;
  gateway: Gateway;
  /** Whose models and budget the requests use: the batch's key, or its account. */
  principalOf(batch: LlmBatchesTable): Promise<Principal>;
  /** Unix seconds. */
  now(): number;
}

const UNFINISHED = ['validating', 'in_progress', 'finalizing'] as const;

export class BatchRunner {
  constructor(private readonly deps: BatchRunnerDeps) {}

  async run(batchId: string, accountId: string, jobSignal: AbortSignal): Promise<void> {
    const { batches, files, now } = this.deps;
    const batch = await batches.get(accountId, batchId);
    if (!batch) return;
    if (batch.status === 'cancelling') {
      await batches.transition(batchId, ['cancelling'], { status: 'cancelled', cancelled_at: now() });
      return;
    }
    // A restarted run starts over: its earlier answers were never written.
    if (!(await batches.transition(batchId, UNFINISHED, { status: 'in_progress', in_progress_at: now() })))
      return;
    let lines: BatchLine[];
    let principal: Principal;
    try {
      const input = await files.content(accountId, batch.input_file_id);
      if (!input) throw new AppError('NOT_FOUND', `the input file ${batch.input_file_id} was deleted`);
      lines = (await parseBatchInput(input.toString('utf8'), batch.endpoint as BatchEndpoint)).lines;
      principal = await this.deps.principalOf(batch);
    } catch (error) {
      await this.fail(batch, error);
      return;
    }
    const stop = new AbortController();
    const onJobAbort = () => stop.abort(jobSignal.reason);
    jobSignal.addEventListener('abort', onJobAbort, { once: true });
    try {
      const outcome = await this.answer(batch, lines, principal, stop);
      await this.finish(batch, outcome);
    } finally {
      jobSignal.removeEventListener('abort', onJobAbort);
    }
  }

  /** Answers the lines; stops early when the batch is cancelled (or the job runs out of time). */
  private async answer(
    batch: LlmBatchesTable,
    lines: BatchLine[],
    principal: Principal,
    stop: AbortController,
  ) {
    const output: string[] = [];
    const errors: string[] = [];
    let outputBytes = 0;
    let next = 0;
    let cancelled = false;
    let checking = false;
    // Progress is written and a cancel looked for on a timer, so a cancel also ends requests under way.
    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        await this.deps.batches.update(batch.id, { completed: output.length, failed: errors.length });
        if ((await this.deps.batches.status(batch.id)) === 'cancelling') {
          cancelled = true;
          stop.abort(new Error('the batch was cancelled'));
        }
      } finally {
        checking = false;
      }
    };
    const timer = setInterval(() => {
      check().catch(() => undefined);
    }, CHECK_MS);
    const worker = async () => {
      while (!stop.signal.aborted && next < lines.length) {
        const line = lines[next++]!;
        const requestId = newId('req');
        const result = await lineCall(this.deps.gateway, batch.endpoint as BatchEndpoint, line.body, {
          principal,
          endpoint: `batch.${batch.endpoint.slice(4).replaceAll('/', '.')}`,
          stream: false,
          signal: stop.signal,
        }).catch((error: unknown) => failureOf(error, requestId));
        if (stop.signal.aborted && result.status !== 200) break;
        const record = (status: number, body: unknown) =>
          JSON.stringify({
            id: newId('batch_req'),
            custom_id: line.customId,
            response: { status_code: status, request_id: requestId, body },
            error: null,
          });
        if (result.status === 200) {
          const text = record(200, result.body);
          if (outputBytes + text.length + 1 > MAX_OUTPUT_BYTES) {
            errors.push(
              record(
                413,
                errorBody(
                  'openai',
                  new AppError('PAYLOAD_TOO_LARGE', `the batch's output passed ${MAX_OUTPUT_BYTES} bytes`),
                  requestId,
                ),
              ),
            );
          } else {
            outputBytes += text.length + 1;
            output.push(text);
          }
        } else errors.push(record(result.status, result.body));
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(LINE_CONCURRENCY, lines.length) }, worker));
    } finally {
      clearInterval(timer);
    }
    if (!cancelled && (await this.deps.batches.status(batch.id)) === 'cancelling') cancelled = true;
    return { output, errors, cancelled };
  }

  /** Writes the output and error files (only those with lines, as OpenAI does) and the final status. */
  private async finish(
    batch: LlmBatchesTable,
    outcome: { output: string[]; errors: string[]; cancelled: boolean },
  ): Promise<void> {
    const { batches, now } = this.deps;
    if (!outcome.cancelled)
      await batches.transition(batch.id, ['in_progress'], { status: 'finalizing', finalizing_at: now() });
    const outputFileId = await this.write(batch, outcome.output, 'output');
    const errorFileId = await this.write(batch, outcome.errors, 'error');
    const counts = {
      completed: outcome.output.length,
      failed: outcome.errors.length,
      output_file_id: outputFileId,
      error_file_id: errorFileId,
    };
    const done = outcome.cancelled
      ? await batches.transition(batch.id, ['cancelling', 'in_progress'], {
          ...counts,
          status: 'cancelled',
          cancelled_at: now(),
        })
      : await batches.transition(batch.id, ['finalizing'], {
          ...counts,
          status: 'completed',
          completed_at: now(),
        });
    // Cancelled while finalizing: the answers are all there, so the batch ends cancelled with them.
    if (!done)
      await batches.transition(batch.id, ['cancelling'], {
        ...counts,
        status: 'cancelled',
        cancelled_at: now(),
      });
  }

  private async write(
    batch: LlmBatchesTable,
    lines: string[],
    kind: 'output' | 'error',
  ): Promise<string | null> {
    if (lines.length === 0) return null;
    const data = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    const id = newId('file');
    await this.deps.files.insert({
      id,
      account_id: batch.account_id,
      purpose: 'batch_output',
      filename: `${batch.id}_${kind}.jsonl`,
      bytes: data.length,
      data,
      created_at: this.deps.now(),
    });
    return id;
  }

  private async fail(batch: LlmBatchesTable, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const line =
      error instanceof AppError && typeof error.details.line === 'number' ? error.details.line : null;
    const errors = { object: 'list', data: [{ code: 'invalid_input', message, param: null, line }] };
    await this.deps.batches.transition(batch.id, ['in_progress', 'cancelling'], {
      status: 'failed',
      failed_at: this.deps.now(),
      errors: JSON.stringify(errors),
    });
  }
}

/** A line's failure as OpenAI's error body with its status (a bug is a 500 without its details). */
function failureOf(error: unknown, requestId: string): { status: number; body: unknown } {
  const appError =
    error instanceof AppError
      ? error
      : new AppError('INTERNAL_ERROR', 'the request failed inside the gateway');
  return { status: appError.status, body: errorBody('openai', appError, requestId) };
}
