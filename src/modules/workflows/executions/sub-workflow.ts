import type { WorkflowStore } from '../definitions/store.js';
import type { Item, RunState, ValidationProblem, WorkflowDefinition } from '../engine/index.js';
import { NodeOperationError } from '../engine/node-type.js';
import { workflowIdOf } from '../nodes/n8n/execute-workflow/workflow-ref.js';
import type { ExecutionRunner, TriggerData } from './runner.js';
import type { ExecutionStore } from './store.js';

const EXECUTE_WORKFLOW = 'n8n-nodes-base.executeWorkflow';
const EXECUTE_WORKFLOW_TRIGGER = 'n8n-nodes-base.executeWorkflowTrigger';
const MANUAL_TRIGGER = 'n8n-nodes-base.manualTrigger';

/** What an Execute Workflow node asks for: run `workflowId` with `items`, waiting for its output or not. */
export interface SubWorkflowCall {
  workflowId: string;
  /** n8n's `source: 'parameter'`: the callee as workflow JSON (text or object) instead of a saved id. */
  workflowJson?: unknown;
  items: Item[];
  wait: boolean;
  /** The calling execution (its depth is read from it). */
  parentExecutionId: string;
  /** The caller's node runs so far: a waited callee counts on from there (one bound per call tree). */
  nodeRunsBefore: number;
}

export interface SubWorkflowDeps {
  workflows: WorkflowStore;
  executions: ExecutionStore;
  runner: ExecutionRunner;
  /** How deep calls may nest (a workflow calling itself through an expression ends here). */
  maxDepth: number;
  /**
   * Refuses a call whose caller may not use every credential of the callee: the caller chooses the
   * callee's input, which its expressions may turn into a request's URL. Throws the node's error.
   */
  assertCallerMayUse?(accountId: string, callerWorkflowId: string, callee: WorkflowDefinition): Promise<void>;
  /**
   * A callee given as workflow JSON, checked as a saved workflow is (body shape, nodes, parameters):
   * its definition, or a node error listing every problem.
   */
  inlineDefinition?(json: unknown): WorkflowDefinition;
}

/**
 * Sub-workflows (n8n's Execute Workflow): the callee is a workflow of the same account, active or
 * not, started from its Execute Workflow Trigger as an execution of its own (mode `integrated`). A
 * waiting call runs the callee inline, in the caller's worker slot, so callers waiting on callees can
 * never take every slot and starve them; a call that does not wait is queued like any execution.
 */
export class SubWorkflowRunner {
  constructor(private readonly deps: SubWorkflowDeps) {}

  /** The callee's output items, and the call tree's node runs after it (unchanged when not waiting). */
  async call(accountId: string, call: SubWorkflowCall): Promise<{ items: Item[]; nodeRuns: number }> {
    const parent = await this.deps.executions.get(call.parentExecutionId);
    const depth = (parent ? ((JSON.parse(parent.trigger_data) as TriggerData).depth ?? 0) : 0) + 1;
    if (depth > this.deps.maxDepth)
      throw new NodeOperationError(
        `Sub-workflows nest deeper than ${this.deps.maxDepth} calls (WORKFLOW_MAX_CALL_DEPTH); is a workflow calling itself?`,
      );
    const inline = call.workflowJson !== undefined;
    let row: { id: string; version: number } | undefined;
    let def: WorkflowDefinition | null;
    if (inline) {
      // Recorded as an execution of the caller's workflow (it has no workflow of its own), running
      // the JSON's definition; the caller's account, credentials and bounds apply as to any callee.
      if (!parent || !this.deps.inlineDefinition)
        throw new NodeOperationError(
          'A workflow given as JSON runs only as a sub-workflow of a saved workflow',
        );
      def = this.deps.inlineDefinition(call.workflowJson);
      row = { id: parent.workflow_id, version: parent.workflow_version };
    } else {
      row = await this.deps.workflows.get(accountId, call.workflowId);
      def = row ? await this.deps.runner.definition(row.id, row.version) : null;
    }
    if (!row || !def) throw new NodeOperationError(`Workflow '${call.workflowId}' was not found`);
    if (parent) await this.deps.assertCallerMayUse?.(accountId, parent.workflow_id, def);
    const trigger = startNodeOf(def, inline);
    const name = inline ? 'The workflow given as JSON' : `Workflow '${call.workflowId}'`;
    if (!trigger)
      throw new NodeOperationError(
        `${name} has no Execute Workflow Trigger node ("When Executed by Another Workflow")${inline ? ' nor a Manual Trigger' : ''}`,
      );
    const input = {
      accountId,
      workflowId: row.id,
      version: row.version,
      mode: 'integrated' as const,
      trigger: {
        nodeName: trigger.name,
        items: call.items,
        depth,
        parentExecutionId: call.parentExecutionId,
        ...(inline ? { definition: def } : {}),
      },
    };
    if (!call.wait) {
      await this.deps.runner.enqueue(input);
      return { items: call.items, nodeRuns: call.nodeRunsBefore };
    }
    const done = await this.deps.runner.runInline({
      ...input,
      trigger: { ...input.trigger, nodeRunsBefore: call.nodeRunsBefore },
    });
    if (!done) throw new NodeOperationError('The sub-workflow execution is gone');
    if (done.status === 'success') return ranOutput(done.run_data, call.nodeRunsBefore);
    if (done.status === 'waiting')
      throw new NodeOperationError(
        `The sub-workflow paused (execution ${done.id}); a caller that waits needs it to end: set options.waitForSubWorkflow to false`,
      );
    throw new NodeOperationError(`The sub-workflow failed: ${done.error_message ?? done.status}`, {
      description: `execution ${done.id} of ${inline ? 'the workflow given as JSON' : `workflow ${row.id}`}`,
    });
  }

  /**
   * Static calls that come back to `def` (itself, or through the workflows it calls by a fixed id):
   * a save-time 400. Ids in expressions are checked at run time by the depth limit.
   */
  async cycleProblems(accountId: string, def: WorkflowDefinition): Promise<ValidationProblem[]> {
    const problems: ValidationProblem[] = [];
    for (const [index, node] of def.nodes.entries()) {
      const first = staticCalleeOf(node);
      if (first === null) continue;
      const path = await this.pathBack(accountId, def.id, first);
      if (path) {
        // `path` runs from the callee to this workflow: what lies between is named.
        const between = path.slice(1, -1);
        const through = between.length > 0 ? `through ${between.join(' → ')} ` : '';
        problems.push({
          path: `nodes[${index}].parameters.workflowId`,
          message: `calls workflow '${first}', which ${through}calls this workflow again: a cycle never ends`,
        });
      }
    }
    return problems;
  }

  /** The chain of fixed calls from `start` back to `target`, if one exists (bounded). */
  private async pathBack(accountId: string, target: string, start: string): Promise<string[] | null> {
    const seen = new Set<string>();
    const queue: Array<{ id: string; path: string[] }> = [{ id: start, path: [start] }];
    while (queue.length > 0 && seen.size < 200) {
      const { id, path } = queue.shift() as { id: string; path: string[] };
      if (id === target) return path;
      if (seen.has(id)) continue;
      seen.add(id);
      const row = await this.deps.workflows.get(accountId, id);
      if (!row) continue;
      for (const node of JSON.parse(row.nodes) as WorkflowDefinition['nodes']) {
        const next = staticCalleeOf(node);
        if (next !== null) queue.push({ id: next, path: [...path, next] });
      }
    }
    return null;
  }
}

/**
 * Where a sub-workflow starts: its Execute Workflow Trigger. A workflow given as JSON may start at a
 * Manual Trigger instead, as n8n starts one (its start node; templates ship them so).
 */
function startNodeOf(def: WorkflowDefinition, inline: boolean) {
  const enabled = def.nodes.filter((n) => !n.disabled);
  return (
    enabled.find((n) => n.type === EXECUTE_WORKFLOW_TRIGGER) ??
    (inline ? enabled.find((n) => n.type === MANUAL_TRIGGER) : undefined)
  );
}

/** The workflow id an Execute Workflow node names without an expression (v1: a string; later: a locator). */
function staticCalleeOf(node: WorkflowDefinition['nodes'][number]): string | null {
  if (node.type !== EXECUTE_WORKFLOW || node.disabled) return null;
  const params = node.parameters as { source?: unknown; workflowId?: unknown };
  if (params.source !== undefined && params.source !== 'database') return null;
  const id = workflowIdOf(params.workflowId);
  return id === null || id.startsWith('=') ? null : id;
}

/**
 * The items of the last node that ran (n8n returns the sub-workflow's last node output) and the call
 * tree's node runs after the callee.
 */
function ranOutput(runData: string | null, before: number): { items: Item[]; nodeRuns: number } {
  const state = (runData ? JSON.parse(runData) : null) as RunState | null;
  const nodeRuns = state?.nodeRuns ?? before;
  const last = state?.lastNodeExecuted;
  if (!state || !last) return { items: [], nodeRuns };
  const runs = state.runData[last] ?? [];
  return { items: runs[runs.length - 1]?.output[0] ?? [], nodeRuns };
}
