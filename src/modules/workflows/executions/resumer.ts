import { AppError, notFound } from '../../../core/errors.js';
import type { JobQueue } from '../../../core/queue/index.js';
import type { FormInfo, Item, Json, RunState } from '../engine/index.js';
import { headersAsData, type WebhookCall } from '../webhooks/call.js';
import type { ResumeSigner } from './resume-signature.js';
import type { ExecutionJob } from './runner.js';
import type { ExecutionStore } from './store.js';

/** What an n8n Form node keeps in its context while the execution waits at its page (`formWaiting`). */
export interface FormWaitingContext {
  /** `approval`: n8n's Send and Wait approval links (`?approved=true|false`), a GET resumes it. */
  operation: 'page' | 'completion' | 'approval';
  /** A completion's page title is `title`, its heading `description` (n8n's completionTitle), its text `submittedText`. */
  form: FormInfo;
  /** A completion answering with a redirect: the URL (http or https). */
  redirectUrl?: string;
  /** A completion answering with n8n's `showText`: the page's HTML. */
  responseText?: string;
  /** A completion answering with n8n's `returnBinary`: the file (the input item's binary property). */
  download?: { data: string; mimeType: string; fileName: string };
  /**
   * n8n's Send and Wait for Response: a submitted page resumes with `{data: {<field key>: value}}`
   * (no `submittedAt`, `formMode`), an approval link with `{data: {approved}}`.
   */
  sendAndWait?: boolean;
}

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
    // A form page resumes by its submission only (checked as its fields say), never by the raw URL.
    if (formWaitingOf(state) !== null)
      throw notFound('EXECUTION_NOT_FOUND', 'Waiting execution', executionId);
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

  /**
   * The n8n Form page an execution waits at (`/form-waiting/{id}`), for the pause the signature is
   * for; 404 when it waits at none (unknown, finished, another pause, or a plain wait); null while the
   * execution runs on towards that pause.
   */
  async formWaiting(executionId: string, waitIndex: number): Promise<FormWaitingContext | null> {
    const row = await this.executions.get(executionId);
    const state = row?.run_data ? (JSON.parse(row.run_data) as RunState) : null;
    const reached = state?.waitIndex ?? 0;
    // The page after a submission, while the execution still runs on to it: not yet there (null).
    if (
      row &&
      (row.status === 'new' || row.status === 'running' || (row.status === 'waiting' && reached < waitIndex))
    )
      return null;
    const waiting = row?.status === 'waiting' && state && reached === waitIndex ? formWaitingOf(state) : null;
    if (!waiting) throw notFound('EXECUTION_NOT_FOUND', 'Waiting form', executionId);
    return waiting;
  }

  /** The path of the execution's form page at pause `waitIndex` (the next page after a submission). */
  formPath(executionId: string, waitIndex: number): string {
    return `/form-waiting/${executionId}?signature=${this.signer.sign(executionId, waitIndex)}`;
  }

  /** Resumes an execution at its form page with `items` (the submission, or null: its input passes on). */
  async resumeByForm(executionId: string, waitIndex: number, items: Item[] | null): Promise<void> {
    const row = await this.executions.get(executionId);
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Waiting form', executionId);
    await this.queue.add(`${executionId}:resume:form:${waitIndex}`, {
      executionId,
      kind: 'resume',
      accountId: row.account_id,
      // Without items the paused node passes its own input on.
      ...(items ? { resumeItems: items } : {}),
    });
  }
}

/** The form page the execution's paused node keeps in its context, if it is an n8n Form node. */
function formWaitingOf(state: RunState): FormWaitingContext | null {
  const paused = state.pending.find((entry) => entry.waiting);
  if (!paused) return null;
  const waiting = state.nodeContext?.[paused.node]?.formWaiting;
  return waiting && typeof waiting === 'object' ? (waiting as unknown as FormWaitingContext) : null;
}
