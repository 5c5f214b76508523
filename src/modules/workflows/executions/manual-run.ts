import type { Principal } from '../../../core/auth/principal.js';
import { AppError, notFound } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import { assertNotArchived } from '../definitions/definitions.js';
import type { WorkflowStore } from '../definitions/store.js';
import type { Item, Json, WorkflowDefinition, WorkflowEngine } from '../engine/index.js';
import type { ExecutionRunner } from './runner.js';
import { keepsExecution } from './save-policy.js';
import type { ExecutionService } from './service.js';
import type { ExecutionWaiters } from './waiters.js';

export interface ManualRunDeps {
  workflows: WorkflowStore;
  runner: ExecutionRunner;
  waiters: ExecutionWaiters;
  executions: ExecutionService;
  engine: WorkflowEngine;
  /** How long the call waits for the run to end before answering 202. */
  waitMs: number;
  /**
   * Refuses a caller who may not use every credential of the workflow: a manual run chooses its
   * input (items, pinned data, start node), which expressions may turn into a request's URL.
   */
  assertCallerMayUse?(accountId: string, principal: Principal | null, def: WorkflowDefinition): Promise<void>;
}

export interface ManualRunBody {
  startNode?: string;
  /** The start node's input: n8n items (`{json}`) or plain objects. */
  items?: unknown[];
  /** Replaces the workflow's own pinned data for this run. */
  pinData?: Record<string, unknown[]> | null;
}

const ENDED = new Set(['success', 'error', 'canceled', 'crashed']);

/**
 * n8n's manual run ("Test workflow"): the current version, active or not, from a trigger or any node,
 * with pinned data standing in for the output of the nodes it names. The run is an ordinary queued
 * execution (mode `manual`); the call waits for its end up to `waitMs`.
 */
export class ManualRunner {
  constructor(private readonly deps: ManualRunDeps) {}

  async run(accountId: string, workflowId: string, body: ManualRunBody, principal: Principal | null = null) {
    const row = await this.deps.workflows.get(accountId, workflowId);
    if (!row) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', workflowId);
    assertNotArchived(row);
    const def = await this.deps.runner.definition(row.id, row.version);
    if (!def) throw notFound('WORKFLOW_NOT_FOUND', 'Workflow', workflowId);
    await this.deps.assertCallerMayUse?.(accountId, principal, def);
    const startNode = this.startNodeOf(def, body.startNode);
    const stored =
      row.pin_data === null ? null : (JSON.parse(row.pin_data) as Record<string, unknown[]> | null);
    // The call's pinned data is checked; the workflow's own may name nodes since removed (n8n keeps it).
    const pinData =
      body.pinData === undefined ? pinnedItems(def, stored, false) : pinnedItems(def, body.pinData, true);

    const executionId = newId('exe');
    // Listening before queueing: a fast run must not end before anyone waits for it.
    const waiter = this.deps.waiters.wait(executionId, this.deps.waitMs);
    try {
      await this.deps.runner.enqueue({
        id: executionId,
        accountId,
        workflowId,
        version: row.version,
        mode: 'manual',
        trigger: {
          nodeName: startNode,
          items: body.items ? asItems(body.items, 'items') : [{ json: {} }],
          ...(pinData ? { pinData } : {}),
        },
      });
    } catch (error) {
      waiter.cancel();
      throw error;
    }
    await waiter.promise;
    const execution = await this.deps.executions.get(accountId, executionId, {
      includeData: true,
      withResumeUrl: true,
    });
    const ended = ENDED.has(execution.status);
    // saveManualExecutions: false — the caller gets the run, the list never shows it.
    if (ended && !keepsExecution(def, 'manual', execution.status))
      await this.deps.executions.delete(accountId, executionId);
    return { ended, execution };
  }

  /** The named node, else the workflow's one enabled trigger. */
  private startNodeOf(def: WorkflowDefinition, name: string | undefined): string {
    if (name !== undefined) {
      const node = def.nodes.find((n) => n.name === name);
      if (!node) throw invalid('startNode', `no node '${name}' in the workflow`);
      if (node.disabled) throw invalid('startNode', `node '${name}' is disabled`);
      return name;
    }
    const trigger = this.deps.engine.triggerNodes(def)[0];
    if (!trigger) throw invalid('startNode', 'the workflow has no trigger node: name the node to start from');
    return trigger.name;
  }
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Cannot run the workflow: ${field} ${message}`, {
    fields: [{ field: `body.${field}`, message }],
  });
}

/** n8n exports pinned items as `{json}` (older versions: plain objects); both become items. */
function asItems(values: unknown[], field: string): Item[] {
  return values.map((value, i) => {
    const json =
      value !== null && typeof value === 'object' && !Array.isArray(value) && 'json' in value
        ? (value as { json: unknown }).json
        : value;
    if (json === null || typeof json !== 'object' || Array.isArray(json))
      throw invalid(`${field}[${i}]`, 'must be an object (or {json: object})');
    return { json: json as Record<string, Json> };
  });
}

function pinnedItems(
  def: WorkflowDefinition,
  pinData: Record<string, unknown[]> | null | undefined,
  strict: boolean,
): Record<string, Item[]> | null {
  if (!pinData) return null;
  const out: Record<string, Item[]> = {};
  for (const [name, values] of Object.entries(pinData)) {
    if (!def.nodes.some((n) => n.name === name)) {
      if (strict) throw invalid(`pinData.${name}`, `no node '${name}' in the workflow`);
      continue;
    }
    out[name] = asItems(values, `pinData.${name}`);
  }
  return Object.keys(out).length > 0 ? out : null;
}
