import { assertNever } from '../../../core/errors.js';
import { checkpointState, NodeCheckpoints } from './checkpoints.js';
import { ExpressionEvaluator } from './expressions.js';
import { WorkflowGraph } from './graph.js';
import { pairedItemOf, pairOutputs, sourcesOf } from './item-pairing.js';
import { type NodeRun, type RunNodeArgs, runNode } from './node-runner.js';
import { inputCount, type NodeRegistry, type NodeResult, type NodeType } from './node-type.js';
import { executionInfo, expressionLanguageOf, workflowData } from './run-expression-data.js';
import { countNodeRun, interruptible, stopReason } from './run-guards.js';
import { type QueueEntry, RunQueue } from './run-queue.js';
import {
  interruptedRun,
  keepContext,
  latestRunIndex,
  pinnedRun,
  recordRun,
  setLatestOutput,
  snapshotOf,
} from './run-records.js';
import { cloneRunState, emptyRunState, latestOutputs, type PendingEntry } from './run-state.js';
import type {
  EngineDeps,
  ExecutionOutcome,
  ExecutionStatus,
  Item,
  Json,
  NodeContext,
  NodeError,
  RunContext,
  RunState,
  ValidationProblem,
  WebhookResponse,
  WorkflowDefinition,
  WorkflowNode,
} from './types.js';
import { DEFAULT_MAX_NODE_RUNS, DEFAULT_MAX_WAIT_MS } from './types.js';
import { validateWorkflow } from './validate.js';

/** One execution as it runs: what the engine's parts share. */
interface Run {
  def: WorkflowDefinition;
  graph: WorkflowGraph;
  state: RunState;
  queue: RunQueue;
  ctx: RunContext;
  lastItems: Item[];
  webhookResponse: WebhookResponse | null;
}

/** A node run whose inputs have all arrived; `nodeType` undefined: no such type is installed. */
interface Step {
  entry: QueueEntry;
  node: WorkflowNode;
  nodeType: NodeType | undefined;
  inputs: Item[][];
}

/**
 * The orchestrator: starts at the trigger, runs nodes breadth-first along connections (a node with two
 * inputs waits for both), stops at the first failure (unless continueOnFail) or at a `wait` node.
 * Pure of HTTP and storage: outbound calls, credentials and the clock come in through EngineDeps. Its
 * parts: what runs next (run-queue), the guards (run-guards), item lineage (item-pairing), resume
 * points (checkpoints) and the run data (run-records).
 */
export class WorkflowEngine {
  private readonly evaluator: ExpressionEvaluator;

  /** `registry`: the node types this engine runs (the service passes the catalogue, tests their own). */
  constructor(
    private readonly deps: EngineDeps,
    private readonly registry: NodeRegistry,
  ) {
    this.evaluator = new ExpressionEvaluator(deps.expressionTimeoutMs, deps.tenant);
  }

  validate(def: WorkflowDefinition): ValidationProblem[] {
    return validateWorkflow(def, this.registry, {
      maxWaitMs: this.deps.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      now: this.deps.now(),
      ...(this.deps.host ? { host: this.deps.host } : {}),
    });
  }

  triggerNodes(def: WorkflowDefinition): WorkflowNode[] {
    return def.nodes.filter((n) => !n.disabled && this.registry.get(n.type, n.typeVersion)?.trigger === true);
  }

  /** The enabled listening nodes whose type bounds how many an account may have active. */
  cappedListeners(def: WorkflowDefinition): Array<{ node: WorkflowNode; maxPerAccount: number }> {
    const out: Array<{ node: WorkflowNode; maxPerAccount: number }> = [];
    for (const node of def.nodes) {
      const max = node.disabled
        ? undefined
        : this.registry.get(node.type, node.typeVersion)?.listener?.maxPerAccount;
      if (max !== undefined) out.push({ node, maxPerAccount: max });
    }
    return out;
  }

  /** Evaluates one expression (e.g. a webhook's dedupe key) over `json`; a plain string is returned as is. */
  async evaluateExpression(
    def: WorkflowDefinition,
    expression: string,
    json: Record<string, Json>,
    ctx?: RunContext,
  ): Promise<unknown> {
    return this.evaluator.resolve(expression, {
      ...workflowData(def, this.deps),
      json,
      node: {},
      execution: executionInfo(ctx, 0),
      now: this.deps.now(),
    });
  }

  async run(
    def: WorkflowDefinition,
    trigger: { nodeName: string; items: Item[] },
    ctx: RunContext,
  ): Promise<ExecutionOutcome> {
    const graph = new WorkflowGraph(def);
    if (!graph.node(trigger.nodeName))
      throw new Error(`No node '${trigger.nodeName}' in workflow '${def.id}'`);
    const run = newRun(def, graph, { ...emptyRunState(), nodeRuns: ctx.nodeRunsBefore ?? 0 }, ctx);
    run.queue.push({ node: trigger.nodeName, input: trigger.items, inputIndex: 0 });
    return this.loop(run);
  }

  /**
   * Continues a `waiting` execution. The paused wait node passes on `resumeItems` (the resume call's
   * data) or, when null (the time came), its own input.
   */
  async resume(
    def: WorkflowDefinition,
    state: RunState,
    resumeItems: Item[] | null,
    ctx: RunContext,
  ): Promise<ExecutionOutcome> {
    const next = cloneRunState(state);
    const pending = next.pending;
    next.pending = [];
    // A new stretch of the run: the resume URL the last pause handed out no longer works.
    next.waitIndex = (state.waitIndex ?? 0) + 1;
    const run = newRun(def, new WorkflowGraph(def), next, ctx);
    for (const entry of pending) this.requeue(run, entry, resumeItems);
    return this.loop(run);
  }

  /** Puts a resume entry back on the queue; the paused wait node's output goes on to its children. */
  private requeue(run: Run, entry: PendingEntry, resumeItems: Item[] | null): void {
    if (entry.inputs) {
      // A checkpointed node run (a crash cut it off): it runs again with the inputs it had.
      const { inputs, ...rest } = entry;
      run.queue.push({ ...rest, flushed: inputs });
    } else if (entry.waiting) {
      // The wait node's output, paired to its input as any node's.
      const items = pairOutputs([entry.input], [resumeItems ?? entry.input])[0] ?? [];
      setLatestOutput(run.state, entry.node, items);
      this.passOn(run, entry.node, [items]);
    } else {
      run.queue.push(entry);
    }
  }

  /** Runs node after node until the queue is empty (success), a guard or a node ends the run, or it pauses. */
  private async loop(run: Run): Promise<ExecutionOutcome> {
    for (let step = this.nextStep(run); step; step = this.nextStep(run)) {
      const ended = this.guard(run, step) ?? (await this.take(run, step));
      if (ended) return ended;
    }
    return this.end(run, 'success');
  }

  /** The next node run whose inputs have all arrived, or undefined when nothing is left to run. */
  private nextStep(run: Run): Step | undefined {
    for (let entry = run.queue.next(); entry; entry = run.queue.next()) {
      const node = run.graph.node(entry.node);
      if (!node) continue;
      const nodeType = this.registry.get(node.type, node.typeVersion);
      const inputs = nodeType
        ? run.queue.inputsOf(entry, inputCount(nodeType, node.parameters))
        : [entry.input];
      if (inputs) return { entry, node, nodeType, inputs };
    }
    return undefined;
  }

  /** Before each node run: the stop signal, the deadline, then the node-run limit (which counts it). */
  private guard(run: Run, step: Step): ExecutionOutcome | null {
    const stopped = stopReason(run.ctx);
    if (stopped) return this.fail(run, { message: stopped }, 'canceled');
    const limit = countNodeRun(run.state, this.deps.maxNodeRuns ?? DEFAULT_MAX_NODE_RUNS);
    return limit ? this.fail(run, { message: limit, node: step.node.name }) : null;
  }

  /** A disabled node passes its input on, a pinned node its pinned items; any other node runs. */
  private async take(run: Run, step: Step): Promise<ExecutionOutcome | null> {
    const { node, nodeType, inputs } = step;
    if (node.disabled) {
      this.pushChildren(run, node.name, [inputs[0] ?? []]);
      return null;
    }
    if (!nodeType)
      return this.fail(run, { message: this.registry.missing(node.type, node.typeVersion), node: node.name });
    const pinned = run.ctx.pinData?.[node.name];
    if (!pinned) return this.execute(run, step, nodeType);
    recordRun(run.state, node.name, pinnedRun(this.deps.now(), inputs, pinned));
    this.passOn(run, node.name, [pinned]);
    await this.nodeFinished(run, node);
    return null;
  }

  /** Runs the node (checkpointed where the node or its retries ask), unless a stop or the deadline cuts it off. */
  private async execute(run: Run, step: Step, nodeType: NodeType): Promise<ExecutionOutcome | null> {
    const { entry, node, inputs } = step;
    // Changed in place by the node, as n8n's node context is (no copy per run: a loop's context holds
    // all its items).
    const context = run.state.nodeContext?.[node.name] ?? {};
    const startedAt = this.deps.now();
    const checkpoints = new NodeCheckpoints(
      run.ctx,
      () => this.deps.now(),
      (tries) => checkpointState(run.state, run.queue, entry, inputs, tries),
    );
    await checkpoints.beforeNode(() => nodeType.checkpoint?.(node.parameters) === true);
    const work = runNode({ ...this.nodeRunArgs(run, step, nodeType, context), ...checkpoints.retryHook() });
    const ran = await interruptible(work, run.ctx);
    await checkpoints.clear();
    if (!('interrupted' in ran)) return this.settle(run, step, ran, context);
    // The node cut off shows in the run data, with no output and the reason.
    const error = { message: ran.interrupted, node: node.name };
    recordRun(run.state, node.name, interruptedRun(startedAt, this.deps.now(), inputs, error));
    await this.nodeFinished(run, node);
    return this.fail(run, error, 'canceled');
  }

  private nodeRunArgs(run: Run, step: Step, nodeType: NodeType, context: NodeContext): RunNodeArgs {
    const { state } = run;
    return {
      triesBefore: step.entry.attempt,
      nodeType,
      node: step.node,
      inputs: step.inputs,
      deps: this.deps,
      evaluator: this.evaluator,
      context,
      nodeRuns: {
        used: () => state.nodeRuns ?? 0,
        add: (runs) => {
          state.nodeRuns = (state.nodeRuns ?? 0) + Math.max(0, runs);
        },
      },
      data: this.nodeData(run, step),
      subNodes: {
        attached: (root, type) => run.graph.attached(root, type),
        typeOf: (node) => this.registry.get(node.type, node.typeVersion),
      },
      ...(run.ctx.deadline ? { deadlineAt: run.ctx.deadline.at } : {}),
      ...(run.ctx.onChunk ? { onChunk: run.ctx.onChunk } : {}),
      ancestors: (name) => run.graph.ancestors(name),
    };
  }

  /** The expression data of a node run, but `$json` (added per item). */
  private nodeData(run: Run, { entry, node, inputs }: Step): RunNodeArgs['data'] {
    const { state } = run;
    return {
      ...workflowData(run.def, this.deps),
      node: expressionLanguageOf(run.def) === 'jsonata' ? latestOutputs(state) : {},
      nodeSnapshot: (name) => snapshotOf(state, run.graph, name),
      pairedItem: (name, index) => pairedItemOf(state, entry, inputs, name, index),
      runIndex: state.runData[node.name]?.length ?? 0,
      prevNode: entry.from ?? { name: '', outputIndex: 0, runIndex: 0 },
      execution: executionInfo(run.ctx, state.waitIndex ?? 0),
      now: this.deps.now(),
    };
  }

  /** Records a node run (its outputs paired to its inputs), then routes its result; a failure ends the run. */
  private async settle(
    run: Run,
    step: Step,
    ran: NodeRun,
    context: NodeContext,
  ): Promise<ExecutionOutcome | null> {
    const { entry, node, inputs } = step;
    const { runData, result } = ran;
    if (result && result.kind !== 'wait') {
      result.output = pairOutputs(inputs, result.output);
      runData.output = result.output;
    }
    runData.source = sourcesOf(entry, inputs.length);
    recordRun(run.state, node.name, runData);
    if (!result) {
      await this.nodeFinished(run, node);
      return this.fail(run, runData.error ?? { message: 'Node failed', node: node.name });
    }
    keepContext(run.state, node.name, context);
    const first = result.kind === 'respond' && run.webhookResponse === null;
    const paused = this.apply(run, node.name, inputs, result);
    // The caller may answer the webhook now, while the rest of the workflow runs on.
    if (first && run.webhookResponse) await run.ctx.onRespond?.(run.webhookResponse);
    await this.nodeFinished(run, node);
    return paused;
  }

  /** Tells the run's owner of the node's latest recorded run (`RunContext.onNodeFinished`). */
  private async nodeFinished(run: Run, node: WorkflowNode): Promise<void> {
    const runIndex = latestRunIndex(run.state, node.name);
    const data = run.state.runData[node.name]?.[runIndex];
    if (data && run.ctx.onNodeFinished)
      await run.ctx.onNodeFinished({ nodeName: node.name, nodeType: node.type, runIndex, data });
  }

  /** Routes a node's result; returns the outcome when the run pauses. */
  private apply(run: Run, name: string, inputs: Item[][], result: NodeResult): ExecutionOutcome | null {
    switch (result.kind) {
      case 'output':
        this.passOn(run, name, result.output);
        return null;
      case 'respond':
        run.webhookResponse ??= result.response;
        this.passOn(run, name, result.output);
        return null;
      case 'wait':
        return this.wait(run, name, inputs[0] ?? [], result.waitTill);
      default:
        return assertNever(result);
    }
  }

  /** A wait whose time has already come passes its items on; any other pauses the run at its node. */
  private wait(run: Run, name: string, items: Item[], waitTill: Date | null): ExecutionOutcome | null {
    if (waitTill && waitTill.getTime() <= this.deps.now().getTime()) {
      const passed = pairOutputs([items], [items])[0] ?? [];
      setLatestOutput(run.state, name, passed);
      this.passOn(run, name, [passed]);
      return null;
    }
    run.state.pending = [{ node: name, input: items, waiting: true }, ...run.queue.drain()];
    return { ...this.end(run, 'waiting'), waitTill, lastItems: items };
  }

  /** `outputs` of node `name` become the run's last items and go on to the nodes they feed. */
  private passOn(run: Run, name: string, outputs: Item[][]): void {
    run.lastItems = outputs.flat();
    this.pushChildren(run, name, outputs);
  }

  private pushChildren(run: Run, name: string, outputs: Item[][]): void {
    run.queue.pushChildren(name, outputs, latestRunIndex(run.state, name));
  }

  private fail(run: Run, error: NodeError, status: 'error' | 'canceled' = 'error'): ExecutionOutcome {
    run.state.error = error;
    run.state.pending = [];
    return this.end(run, status);
  }

  private end(run: Run, status: ExecutionStatus): ExecutionOutcome {
    return {
      status,
      state: run.state,
      waitTill: null,
      lastItems: run.lastItems,
      webhookResponse: run.webhookResponse,
    };
  }
}

function newRun(def: WorkflowDefinition, graph: WorkflowGraph, state: RunState, ctx: RunContext): Run {
  return { def, graph, state, queue: new RunQueue(graph), ctx, lastItems: [], webhookResponse: null };
}
