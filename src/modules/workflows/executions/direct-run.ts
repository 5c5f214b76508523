import { AppError, notFound } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import { webhookNodesOf } from '../definitions/definitions.js';
import type { WorkflowStore } from '../definitions/store.js';
import type { Json, WebhookNodeInfo, WorkflowDefinition } from '../engine/index.js';
import { type StoredResponse, unansweredResponse } from '../webhooks/response.js';
import type { ExecutionRunner } from './runner.js';
import type { ExecutionStore } from './store.js';
import type { ExecutionWaiters } from './waiters.js';

export interface DirectRunDeps {
  workflows: WorkflowStore;
  executions: ExecutionStore;
  runner: ExecutionRunner;
  waiters: ExecutionWaiters;
}

export interface DirectRunInput {
  accountId: string;
  workflowId: string;
  mode: 'flow' | 'agent' | 'mcp';
  /**
   * The trigger item's `body`: a workflow written for a webhook reads `$json.body.question`. Stored as
   * JSON with the execution, so values JSON cannot hold (undefined, functions) are dropped.
   */
  body: Record<string, unknown>;
  timeoutMs: number;
}

/**
 * Runs a workflow for a flow or an agent of the platform and waits for its answer, like n8n's
 * Execute Workflow: from its first webhook node, on its current version, active or not. The run is
 * an ordinary queued execution (mode `flow` or `agent`), listed and retried like any other.
 */
export class DirectRunner {
  constructor(private readonly deps: DirectRunDeps) {}

  /** Null when the workflow can be run directly; else why not (for a save-time 400). */
  async runnable(accountId: string, workflowId: string): Promise<string | null> {
    const found = await this.current(accountId, workflowId);
    if (!found) return `Workflow '${workflowId}' was not found`;
    if (!found.hook) return `Workflow '${workflowId}' has no webhook node to start from`;
    return null;
  }

  async run(input: DirectRunInput): Promise<{ executionId: string; response: StoredResponse }> {
    const found = await this.current(input.accountId, input.workflowId);
    if (!found) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', input.workflowId);
    const { hook, version } = found;
    if (!hook) {
      const message = `Workflow '${input.workflowId}' has no webhook node to start from`;
      throw new AppError('VALIDATION_ERROR', message, { workflowId: input.workflowId });
    }
    const executionId = newId('exe');
    // Waiting before queueing: a fast run must not answer before anyone listens.
    const waiter = this.deps.waiters.wait(executionId, input.timeoutMs);
    try {
      await this.deps.runner.enqueue({
        id: executionId,
        accountId: input.accountId,
        workflowId: input.workflowId,
        version,
        mode: input.mode,
        trigger: {
          nodeName: hook.nodeName,
          items: [{ json: { headers: {}, params: {}, query: {}, body: input.body as Record<string, Json> } }],
        },
      });
    } catch (error) {
      waiter.cancel();
      throw error;
    }
    const stored = (await waiter.promise) ?? (await this.deps.executions.get(executionId))?.response ?? null;
    if (stored) return { executionId, response: JSON.parse(stored) as StoredResponse };
    return {
      executionId,
      response: unansweredResponse(executionId, await this.deps.executions.get(executionId)),
    };
  }

  /** The workflow's current version and its first enabled webhook node, or null if not the account's. */
  private async current(
    accountId: string,
    workflowId: string,
  ): Promise<{ version: number; def: WorkflowDefinition; hook: WebhookNodeInfo | undefined } | null> {
    const row = await this.deps.workflows.get(accountId, workflowId);
    if (!row) return null;
    const def = await this.deps.runner.definition(row.id, row.version);
    if (!def) return null;
    return { version: row.version, def, hook: webhookNodesOf(def)[0] };
  }
}
