import { AppError, notFound } from '../../../core/errors.js';
import type { JobQueue } from '../../../core/queue/index.js';
import type { Json, RunState } from '../engine/index.js';
import { headersAsData, type WebhookCall } from '../webhooks/call.js';
import type { ResumeSigner } from './resume-signature.js';
import type { ExecutionJob } from './runner.js';
import type { ExecutionStore } from './store.js';

/** Resumes executions paused at a `wait` node set to resume by its (signed) URL. */
export class ExecutionResumer {
  constructor(
    private readonly executions: ExecutionStore,
    private readonly queue: JobQueue<ExecutionJob>,
    private readonly signer: ResumeSigner,
  ) {}

  /**
   * The pause a resume URL's signature is for; 401 without one, 403 for a wrong one. Checked before
   * the body is read or the database asked: without it nobody learns whether an execution exists.
   */
  authorize(executionId: string, signature: string | undefined): number {
    if (!signature) {
      throw new AppError('UNAUTHORIZED', "The resume URL's signature is missing (query parameter signature)");
    }
    const waitIndex = this.signer.verify(executionId, signature);
    if (waitIndex === null) throw new AppError('FORBIDDEN', "The resume URL's signature is not valid");
    return waitIndex;
  }

  async resumeByWebhook(
    executionId: string,
    waitIndex: number,
    call: Pick<WebhookCall, 'headers' | 'query' | 'body'>,
  ): Promise<void> {
    const row = await this.executions.get(executionId);
    const state = row?.status === 'waiting' && row.run_data ? (JSON.parse(row.run_data) as RunState) : null;
    // Only the pause the URL was made for, and only waits without a time; anything else looks unknown.
    if (!row || !state || (state.waitIndex ?? 0) !== waitIndex) {
      throw notFound('EXECUTION_NOT_FOUND', 'Waiting execution', executionId);
    }
    if (row.wait_till !== null) {
      throw new AppError('CONFLICT', 'This execution resumes at a set time, not by its URL', {
        executionId,
        waitTill: row.wait_till,
      });
    }
    const { signature: _secret, ...query } = call.query as Record<string, Json>;
    const json: Record<string, Json> = {
      headers: headersAsData(call),
      query,
      body: (call.body ?? {}) as Json,
    };
    await this.queue.add(`${executionId}:resume:webhook:${waitIndex}`, {
      executionId,
      kind: 'resume',
      accountId: row.account_id,
      resumeItems: [{ json }],
    });
  }
}
