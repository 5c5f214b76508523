import type { WorkflowStore } from '../definitions/store.js';
import type { Item, Json, NodeError, WorkflowDefinition } from '../engine/index.js';
import type { ExecutionRow } from './store.js';

/**
 * n8n's error workflows: when an execution fails, the workflow its `settings.errorWorkflow` names
 * starts from its Error Trigger node with one item describing the failure.
 */

const ERROR_TRIGGER_TYPE = 'n8n-nodes-base.errorTrigger';

/** n8n's editor saves "No Workflow" as `DEFAULT`; an empty id means none as well. */
const NO_ERROR_WORKFLOW: ReadonlySet<string> = new Set(['', 'DEFAULT']);

/**
 * Modes whose failure starts no error workflow: an error workflow's own failure (so two error
 * workflows naming each other cannot loop) and a manual or test-webhook run (n8n runs those in manual
 * mode, whose failure its editor shows).
 */
const QUIET_MODES: ReadonlySet<string> = new Set(['error', 'manual', 'test']);

/** The error workflow a failed execution of `def` should start, or null. */
export function errorWorkflowIdOf(def: WorkflowDefinition | null, mode: string): string | null {
  if (!def || QUIET_MODES.has(mode)) return null;
  const id = def.settings?.errorWorkflow;
  return typeof id === 'string' && !NO_ERROR_WORKFLOW.has(id) ? id : null;
}

/** `${PUBLIC_URL}` from the runner's resume URL base (`${PUBLIC_URL}/webhook-waiting`). */
export function publicUrlOf(resumeUrlBase: string): string {
  return resumeUrlBase.replace(/\/+$/, '').replace(/\/webhook-waiting$/, '');
}

export interface FailedExecution {
  row: ExecutionRow;
  def: WorkflowDefinition;
  error: NodeError | null;
  lastNodeExecuted: string | null;
}

/** n8n's IWorkflowErrorData for a failed execution: `{ execution: {…}, workflow: { id, name } }`. */
export function errorPayload(failed: FailedExecution, publicUrl: string): Item {
  const { row, def, error } = failed;
  const described: Record<string, Json> = { message: error?.message ?? 'Workflow execution failed' };
  if (error?.description !== undefined) described.description = error.description;
  const execution: Record<string, Json> = {
    id: row.id,
    url: `${publicUrl}/api/v1/executions/${row.id}`,
    error: described,
    lastNodeExecuted: failed.lastNodeExecuted,
    mode: row.mode,
  };
  // n8n leaves retryOf out (undefined) unless the execution retried another.
  if (row.retry_of) execution.retryOf = row.retry_of;
  return { json: { execution, workflow: { id: row.workflow_id, name: def.name } } };
}

/** Where an error workflow starts: its current version, from its Error Trigger node. */
interface ErrorWorkflowStart {
  workflowId: string;
  version: number;
  nodeName: string;
}

export type ErrorWorkflowLookup =
  | { found: true; start: ErrorWorkflowStart }
  | { found: false; reason: 'missing' | 'no-trigger' };

/**
 * The error workflow `id` of the account, active or not (n8n runs it either way). Another
 * account's workflow is looked up with this account's id, so it is simply not found.
 */
export async function findErrorWorkflow(
  workflows: Pick<WorkflowStore, 'get'>,
  definition: (workflowId: string, version: number) => Promise<WorkflowDefinition | null>,
  accountId: string,
  id: string,
): Promise<ErrorWorkflowLookup> {
  const row = await workflows.get(accountId, id);
  const def = row ? await definition(row.id, row.version) : null;
  if (!row || !def) return { found: false, reason: 'missing' };
  const trigger = def.nodes.find((n) => n.type === ERROR_TRIGGER_TYPE && !n.disabled);
  if (!trigger) return { found: false, reason: 'no-trigger' };
  return { found: true, start: { workflowId: row.id, version: row.version, nodeName: trigger.name } };
}
