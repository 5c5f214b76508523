import { type Clock, isoNow } from '../../../core/clock.js';
import { whenStored } from '../../../core/db/faults.js';
import { isAppError } from '../../../core/errors.js';
import type { WorkflowStore } from '../definitions/store.js';
import type { WorkflowDefinition } from '../engine/index.js';
import type { DeliveryStore } from '../webhooks/delivery-store.js';
import { errorPayload, errorWorkflowIdOf, findErrorWorkflow, publicUrlOf } from './error-workflow.js';
import type { ExecutionLifecycleHooks, FinishedRun } from './lifecycle-hooks.js';
import type { Log } from './log.js';
import type { NewExecution } from './runner.js';
import { keepsExecution } from './save-policy.js';
import type { ExecutionStore } from './store.js';
import type { ExecutionWaiters } from './waiters.js';

/**
 * The subscribers of the runner's lifecycle hooks, one concern each. `subscribeAll` adds them in
 * the order the outcome of a run must travel: stored first (which may drop it), then the webhook
 * delivery's stored answer, the error workflow, whoever waits, and last the save policy's deletion.
 */

/** Persistence: the run's outcome and early answers are stored with the execution. */
function persistence(hooks: ExecutionLifecycleHooks, deps: { executions: ExecutionStore; clock: Clock }) {
  hooks.addHandler('webhookResponded', async ({ row, stored }) => {
    await deps.executions.setResponse(row.id, stored);
  });
  hooks.addHandler('executionFinished', async (run) => {
    const { outcome } = run;
    const stopped = outcome.status === 'waiting' ? null : isoNow(deps.clock);
    // The run is over: its outcome waits out a database outage rather than being lost with it.
    const kept = await whenStored(() =>
      deps.executions.finish(run.row.id, {
        status: outcome.status,
        run_data: run.runData,
        error_message: outcome.state.error?.message ?? null,
        response: run.response,
        wait_till: outcome.waitTill ? outcome.waitTill.toISOString() : null,
        stopped_at: stopped,
      }),
    );
    // Stopped through the API while it ran: its result is dropped.
    if (!kept) run.dropped = true;
  });
}

/** Webhook answers: a deduplicated delivery's answer is kept for the sender's repeats, or freed. */
function webhookAnswers(hooks: ExecutionLifecycleHooks, deps: { deliveries: DeliveryStore }) {
  hooks.addHandler('webhookResponded', async ({ row, trigger, nodeName, stored }) => {
    if (trigger.dedupeKey)
      await deps.deliveries.setResponse(row.workflow_id, nodeName, trigger.dedupeKey, stored);
  });
  hooks.addHandler('executionFinished', async ({ row, trigger, hook, outcome, response, dropped }) => {
    if (!trigger.dedupeKey || !hook) return;
    // A dropped run's delivery runs again on a retry.
    if (dropped) {
      await deps.deliveries.release(row.workflow_id, hook.nodeName, trigger.dedupeKey, row.id);
      return;
    }
    if (!response) return;
    const failed = outcome.status === 'error' && !outcome.state.error?.problems?.length;
    // A failed run (other than a bad body) must not be replayed to the sender's retries for 24 h:
    // the claim is released so the retry runs again.
    if (failed) await deps.deliveries.release(row.workflow_id, hook.nodeName, trigger.dedupeKey, row.id);
    else await deps.deliveries.setResponse(row.workflow_id, hook.nodeName, trigger.dedupeKey, response);
  });
}

interface ErrorWorkflowDeps {
  workflows: WorkflowStore;
  definition(workflowId: string, version: number): Promise<WorkflowDefinition | null>;
  enqueue(input: NewExecution): Promise<string>;
  resumeUrlBase: string;
  log: Log;
}

/**
 * Error workflows: a failed execution queues its error workflow (n8n's `settings.errorWorkflow`),
 * before the answer goes out, so whoever saw the failure finds the error run already.
 */
function errorWorkflows(hooks: ExecutionLifecycleHooks, deps: ErrorWorkflowDeps) {
  hooks.addHandler('executionFinished', async (run) => {
    if (!run.dropped && run.outcome.status === 'error') await startErrorWorkflow(run, deps);
  });
}

async function startErrorWorkflow(
  { row, def, outcome }: FinishedRun,
  deps: ErrorWorkflowDeps,
): Promise<void> {
  const errorWorkflowId = errorWorkflowIdOf(def, row.mode);
  if (!def || !errorWorkflowId) return;
  const at = { executionId: row.id, workflowId: row.workflow_id, errorWorkflowId };
  try {
    const lookup = await findErrorWorkflow(deps.workflows, deps.definition, row.account_id, errorWorkflowId);
    if (!lookup.found) {
      const why = lookup.reason === 'missing' ? 'is not found' : 'has no Error Trigger node';
      deps.log.warn(at, `error workflow ${why}; not started`);
      return;
    }
    const { state } = outcome;
    const item = errorPayload(
      { row, def, error: state.error, lastNodeExecuted: state.lastNodeExecuted },
      publicUrlOf(deps.resumeUrlBase),
    );
    await deps.enqueue({
      accountId: row.account_id,
      workflowId: lookup.start.workflowId,
      version: lookup.start.version,
      mode: 'error',
      trigger: { nodeName: lookup.start.nodeName, items: [item] },
    });
  } catch (error) {
    // The failed execution is stored already; a broken error workflow start must not undo that.
    // A spent quota is a warning, not a failure: nothing is broken, and no caller hears of it.
    if (isAppError(error) && error.code === 'RATE_LIMIT_EXCEEDED')
      deps.log.warn(
        { ...at, reason: error.message },
        'error workflow not started: daily execution quota spent',
      );
    else deps.log.error({ err: error, ...at }, 'error workflow could not be started');
  }
}

/** Waiters: whoever waits for the run's answer (a webhook call, a flow, a manual run) is told. */
function waiterNotices(hooks: ExecutionLifecycleHooks, deps: { waiters: ExecutionWaiters }) {
  hooks.addHandler('webhookResponded', async ({ row, stored }) => {
    await deps.waiters.notify(row.id, stored);
  });
  hooks.addHandler('executionFinished', async ({ row, response, dropped }) => {
    await deps.waiters.notify(row.id, dropped ? null : response);
  });
}

/**
 * The save policy: a run the workflow's save settings do not keep is deleted once answered. A
 * manual run is read by its caller first (manual-run.ts deletes it then), and so is a run made
 * inline (`runsInline`: a waited sub-workflow).
 */
function savePolicy(
  hooks: ExecutionLifecycleHooks,
  deps: { executions: ExecutionStore; runsInline(executionId: string): boolean },
) {
  hooks.addHandler('executionFinished', async ({ row, def, outcome, dropped }) => {
    if (dropped || row.mode === 'manual' || deps.runsInline(row.id)) return;
    if (!keepsExecution(def, row.mode, outcome.status)) await deps.executions.delete(row.account_id, row.id);
  });
}

export type SubscriberDeps = Parameters<typeof persistence>[1] &
  Parameters<typeof webhookAnswers>[1] &
  ErrorWorkflowDeps &
  Parameters<typeof waiterNotices>[1] &
  Parameters<typeof savePolicy>[1];

/** Every subscriber, in the order a run's outcome travels. */
export function subscribeAll(hooks: ExecutionLifecycleHooks, deps: SubscriberDeps): void {
  persistence(hooks, deps);
  webhookAnswers(hooks, deps);
  errorWorkflows(hooks, deps);
  waiterNotices(hooks, deps);
  savePolicy(hooks, deps);
}
