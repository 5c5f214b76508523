import { assertNever } from '../../../core/errors.js';
import { ExpressionEvaluator, type ExpressionLanguage, type NodeSnapshot } from './expressions.js';
import { WorkflowGraph } from './graph.js';
import { type NodeRun, runNode } from './node-runner.js';
import { inputCount, type NodeRegistry, type NodeResult } from './node-type.js';
import { cloneRunState, emptyRunState, latestOutputs, type PendingEntry } from './run-state.js';
import type {
  EngineDeps,
  ExecutionOutcome,
  Item,
  Json,
  NodeContext,
  RunContext,
  RunSource,
  RunState,
  ValidationProblem,
  WebhookResponse,
  WorkflowDefinition,
  WorkflowNode,
} from './types.js';
import { DEFAULT_MAX_NODE_RUNS, DEFAULT_MAX_WAIT_MS } from './types.js';
import { validateWorkflow } from './validate.js';

/** A queued node run; `flushed` holds all inputs of a merge run with what it has, `sources` their origins. */
type QueueEntry = PendingEntry & { flushed?: Item[][]; sources?: Array<PendingEntry['from'] | null> };

interface Run {
  def: WorkflowDefinition;
  graph: WorkflowGraph;
  state: RunState;
  queue: QueueEntry[];
  /** Multi-input nodes (merge) holding the inputs received so far, and where each came from. */
  buffered: Map<string, Map<number, Item[]>>;
  bufferedFrom?: Map<string, Map<number, PendingEntry['from']>>;
  ctx: RunContext;
  lastItems: Item[];
  webhookResponse: WebhookResponse | null;
}

/**
 * The orchestrator: starts at the trigger, runs nodes breadth-first along connections (a node with two
 * inputs waits for both), stops at the first failure (unless continueOnFail) or at a `wait` node.
 * Pure of HTTP and storage: outbound calls, credentials and the clock come in through EngineDeps.
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
    });
  }

  triggerNodes(def: WorkflowDefinition): WorkflowNode[] {
    return def.nodes.filter((n) => !n.disabled && this.registry.get(n.type, n.typeVersion)?.trigger === true);
  }

  /** Evaluates one expression (e.g. a webhook's dedupe key) over `json`; a plain string is returned as is. */
  async evaluateExpression(
    def: WorkflowDefinition,
    expression: string,
    json: Record<string, Json>,
    ctx?: RunContext,
  ): Promise<unknown> {
    return this.evaluator.resolve(expression, {
      ...this.workflowData(def),
      json,
      node: {},
      execution: executionInfo(ctx, 0),
      now: this.deps.now(),
    });
  }

  /** The expression data that depends on the workflow only. */
  private workflowData(def: WorkflowDefinition) {
    const settings = def.settings ?? {};
    return {
      workflow: { id: def.id, name: def.name, active: (def as { active?: boolean }).active ?? false },
      nodeNames: def.nodes.map((n) => n.name),
      env: this.deps.env,
      vars: this.deps.vars ?? {},
      language: expressionLanguageOf(def),
      ...(typeof settings.timezone === 'string' && settings.timezone !== 'DEFAULT'
        ? { timezone: settings.timezone }
        : {}),
    };
  }

  async run(
    def: WorkflowDefinition,
    trigger: { nodeName: string; items: Item[] },
    ctx: RunContext,
  ): Promise<ExecutionOutcome> {
    const graph = new WorkflowGraph(def);
    if (!graph.node(trigger.nodeName))
      throw new Error(`No node '${trigger.nodeName}' in workflow '${def.id}'`);
    return this.loop({
      def,
      graph,
      state: { ...emptyRunState(), nodeRuns: ctx.nodeRunsBefore ?? 0 },
      queue: [{ node: trigger.nodeName, input: trigger.items, inputIndex: 0 }],
      buffered: new Map(),
      ctx,
      lastItems: [],
      webhookResponse: null,
    });
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
    const queue = next.pending;
    next.pending = [];
    // A new stretch of the run: the resume URL the last pause handed out no longer works.
    next.waitIndex = (state.waitIndex ?? 0) + 1;
    const run: Run = {
      def,
      graph: new WorkflowGraph(def),
      state: next,
      queue: [],
      buffered: new Map(),
      ctx,
      lastItems: [],
      webhookResponse: null,
    };
    for (const entry of queue) {
      if (entry.inputs) {
        // A checkpointed node run (a crash cut it off): it runs again with the inputs it had.
        const { inputs, ...rest } = entry;
        run.queue.push({ ...rest, flushed: inputs });
      } else if (entry.waiting) {
        // The wait node's output, paired to its input as any node's.
        const items = pairOutputs([entry.input], [resumeItems ?? entry.input])[0] ?? [];
        const runs = next.runData[entry.node];
        const last = runs?.[runs.length - 1];
        if (last) last.output = [items];
        run.lastItems = items;
        this.enqueueChildren(run, entry.node, [items]);
      } else {
        run.queue.push(entry);
      }
    }
    return this.loop(run);
  }

  private async loop(run: Run): Promise<ExecutionOutcome> {
    const { graph, state } = run;
    for (;;) {
      const entry = this.nextEntry(run);
      if (!entry) break;
      const node = graph.node(entry.node);
      if (!node) continue;
      const nodeType = this.registry.get(node.type, node.typeVersion);
      const inputs = nodeType
        ? this.collectInputs(run, entry, inputCount(nodeType, node.parameters))
        : [entry.input];
      if (!inputs) continue; // waiting for its other input
      if (run.ctx.stopSignal?.aborted) {
        run.queue.unshift(entry);
        return this.fail(run, { message: STOPPED }, 'canceled');
      }
      const deadline = run.ctx.deadline;
      if (deadline && Date.now() > deadline.at) {
        run.queue.unshift(entry);
        return this.fail(run, { message: timeoutMessage(deadline) }, 'canceled');
      }
      // Counted over the whole execution, so a loop pausing at a Wait on each round is bounded too.
      state.nodeRuns = (state.nodeRuns ?? 0) + 1;
      const maxRuns = this.deps.maxNodeRuns ?? DEFAULT_MAX_NODE_RUNS;
      if (state.nodeRuns > maxRuns) {
        return this.fail(run, {
          message: `The execution exceeded the limit of ${maxRuns} node runs (WORKFLOW_MAX_NODE_RUNS); is there an endless loop?`,
          node: node.name,
        });
      }
      if (node.disabled) {
        this.enqueueChildren(run, node.name, [inputs[0] ?? []]);
        continue;
      }
      if (!nodeType)
        return this.fail(run, {
          message: this.registry.missing(node.type, node.typeVersion),
          node: node.name,
        });
      const pinned = run.ctx.pinData?.[node.name];
      if (pinned) {
        this.recordPinned(run, node.name, inputs, pinned);
        continue;
      }
      const language = expressionLanguageOf(run.def);
      // Changed in place by the node, as n8n's node context is (no copy per run: a loop's context holds
      // all its items).
      const context = state.nodeContext?.[node.name] ?? {};

      const startedAt = this.deps.now();
      let checkpointed = false;
      const checkpoint = run.ctx.checkpoint;
      if (checkpoint && nodeType.checkpoint?.(node.parameters)) {
        await checkpoint(this.checkpointState(run, entry, inputs), this.deps.now());
        checkpointed = true;
      }
      const work = runNode({
        triesBefore: entry.attempt,
        ...(checkpoint
          ? {
              beforeRetry: async (tries: number, waitMs: number) => {
                const at = new Date(this.deps.now().getTime() + waitMs);
                await checkpoint(this.checkpointState(run, entry, inputs, tries), at);
                checkpointed = true;
              },
            }
          : {}),
        nodeType,
        node,
        inputs,
        deps: this.deps,
        evaluator: this.evaluator,
        context,
        nodeRuns: {
          used: () => state.nodeRuns ?? 0,
          add: (runs) => {
            state.nodeRuns = (state.nodeRuns ?? 0) + Math.max(0, runs);
          },
        },
        data: {
          ...this.workflowData(run.def),
          node: language === 'jsonata' ? latestOutputs(state) : {},
          nodeSnapshot: (name) => snapshotOf(run, name),
          pairedItem: (name, index) => pairedItemOf(run.state, entry, inputs, name, index),
          runIndex: state.runData[node.name]?.length ?? 0,
          prevNode: entry.from ?? { name: '', outputIndex: 0, runIndex: 0 },
          execution: executionInfo(run.ctx, state.waitIndex ?? 0),
          now: this.deps.now(),
        },
      });
      const ran = await interruptible(work, run.ctx);
      if (checkpointed) await run.ctx.clearCheckpoint?.();
      if ('interrupted' in ran) {
        // The node cut off shows in the run data, with no output and the reason.
        const error = { message: ran.interrupted, node: node.name };
        const list = state.runData[node.name] ?? [];
        list.push({
          startTime: startedAt.toISOString(),
          executionTime: this.deps.now().getTime() - startedAt.getTime(),
          input: inputs.flat(),
          output: [],
          error,
        });
        state.runData[node.name] = list;
        state.lastNodeExecuted = node.name;
        return this.fail(run, error, 'canceled');
      }
      const { runData, result } = ran;
      if (result && result.kind !== 'wait') {
        result.output = pairOutputs(inputs, result.output);
        runData.output = result.output;
      }
      runData.source = sourcesOf(entry, inputs.length);
      const list = state.runData[node.name] ?? [];
      list.push(runData);
      state.runData[node.name] = list;
      state.lastNodeExecuted = node.name;
      if (!result) return this.fail(run, runData.error ?? { message: 'Node failed', node: node.name });
      if (Object.keys(context).length > 0) {
        state.nodeContext ??= {};
        state.nodeContext[node.name] = context;
      }

      const first = result.kind === 'respond' && run.webhookResponse === null;
      const paused = this.apply(run, node.name, inputs, result);
      // The caller may answer the webhook now, while the rest of the workflow runs on.
      if (first && run.webhookResponse) await run.ctx.onRespond?.(run.webhookResponse);
      if (paused) return paused;
    }
    return {
      status: 'success',
      state,
      waitTill: null,
      lastItems: run.lastItems,
      webhookResponse: run.webhookResponse,
    };
  }

  /**
   * The run as a resume point at `entry`'s node: that node first (with all its inputs, and the tries
   * it made), then what was queued and buffered, unchanged. Its node run is not counted yet.
   */
  private checkpointState(run: Run, entry: QueueEntry, inputs: Item[][], tries?: number): RunState {
    const head: PendingEntry = {
      node: entry.node,
      input: [],
      inputs,
      ...(entry.from ? { from: entry.from } : {}),
      ...(tries ? { attempt: tries } : {}),
    };
    const queued = run.queue.map(
      ({ flushed, ...rest }): PendingEntry => (flushed ? { ...rest, inputs: flushed } : rest),
    );
    const buffered: PendingEntry[] = [];
    for (const [node, got] of run.buffered)
      for (const [inputIndex, input] of got) buffered.push({ node, input, inputIndex });
    return {
      ...run.state,
      error: null,
      nodeRuns: Math.max(0, (run.state.nodeRuns ?? 1) - 1),
      pending: [head, ...queued, ...buffered],
    };
  }

  /** A pinned node: its run data shows the pinned items as its output, and they flow on. */
  private recordPinned(run: Run, name: string, inputs: Item[][], pinned: Item[]): void {
    const list = run.state.runData[name] ?? [];
    list.push({
      startTime: this.deps.now().toISOString(),
      executionTime: 0,
      input: inputs.flat(),
      output: [pinned],
    });
    run.state.runData[name] = list;
    run.state.lastNodeExecuted = name;
    run.lastItems = pinned;
    this.enqueueChildren(run, name, [pinned]);
  }

  /** Routes a node's result; returns the outcome when the run pauses. */
  private apply(run: Run, name: string, inputs: Item[][], result: NodeResult): ExecutionOutcome | null {
    switch (result.kind) {
      case 'output':
        run.lastItems = result.output.flat();
        this.enqueueChildren(run, name, result.output);
        return null;
      case 'respond':
        run.webhookResponse ??= result.response;
        run.lastItems = result.output.flat();
        this.enqueueChildren(run, name, result.output);
        return null;
      case 'wait': {
        const items = inputs[0] ?? [];
        if (result.waitTill && result.waitTill.getTime() <= this.deps.now().getTime()) {
          const passed = pairOutputs([items], [items])[0] ?? [];
          const runs = run.state.runData[name];
          const last = runs?.[runs.length - 1];
          if (last) last.output = [passed];
          run.lastItems = passed;
          this.enqueueChildren(run, name, [passed]);
          return null;
        }
        run.state.pending = [
          { node: name, input: items, waiting: true },
          ...run.queue,
          ...this.drainBuffered(run),
        ];
        return {
          status: 'waiting',
          state: run.state,
          waitTill: result.waitTill,
          lastItems: items,
          webhookResponse: run.webhookResponse,
        };
      }
      default:
        return assertNever(result);
    }
  }

  private enqueueChildren(run: Run, name: string, outputs: Item[][]): void {
    const runIndex = Math.max(0, (run.state.runData[name]?.length ?? 1) - 1);
    outputs.forEach((items, outputIndex) => {
      if (items.length === 0) return;
      for (const target of run.graph.children(name, outputIndex)) {
        run.queue.push({
          node: target.node,
          input: items,
          inputIndex: target.index,
          from: { name, outputIndex, runIndex },
        });
      }
    });
  }

  /** The next queued entry; when the queue is empty, a merge still missing an input runs with what it has. */
  private nextEntry(run: Run): QueueEntry | undefined {
    const entry = run.queue.shift();
    if (entry) return entry;
    const first = run.buffered.keys().next();
    if (first.done) return undefined;
    const name = first.value;
    const inputs = run.buffered.get(name) ?? new Map<number, Item[]>();
    run.buffered.delete(name);
    const count = Math.max(0, ...inputs.keys()) + 1;
    return { node: name, input: [], flushed: Array.from({ length: count }, (_, i) => inputs.get(i) ?? []) };
  }

  /** Inputs per index for a node, or null while a multi-input node still waits for another input. */
  private collectInputs(run: Run, entry: QueueEntry, inputCount: number): Item[][] | null {
    if (entry.flushed) return padInputs(entry.flushed, inputCount);
    if (inputCount <= 1) return [entry.input];
    const index = entry.inputIndex ?? 0;
    const got = run.buffered.get(entry.node) ?? new Map<number, Item[]>();
    got.set(index, [...(got.get(index) ?? []), ...entry.input]);
    run.bufferedFrom ??= new Map();
    const from = run.bufferedFrom.get(entry.node) ?? new Map<number, PendingEntry['from']>();
    from.set(index, entry.from);
    run.bufferedFrom.set(entry.node, from);
    const needed = run.graph.connectedInputs(entry.node);
    if (!needed.every((i) => got.has(i))) {
      run.buffered.set(entry.node, got);
      return null;
    }
    run.buffered.delete(entry.node);
    run.bufferedFrom.delete(entry.node);
    entry.sources = Array.from({ length: inputCount }, (_, i) => from.get(i) ?? null);
    return padInputs(
      Array.from({ length: inputCount }, (_, i) => got.get(i) ?? []),
      inputCount,
    );
  }

  private drainBuffered(run: Run): PendingEntry[] {
    const out: PendingEntry[] = [];
    for (const [node, inputs] of run.buffered) {
      for (const [inputIndex, input] of inputs) out.push({ node, input, inputIndex });
    }
    run.buffered.clear();
    return out;
  }

  private fail(
    run: Run,
    error: { message: string; node?: string },
    status: 'error' | 'canceled' = 'error',
  ): ExecutionOutcome {
    run.state.error = error;
    run.state.pending = [];
    return {
      status,
      state: run.state,
      waitTill: null,
      lastItems: run.lastItems,
      webhookResponse: run.webhookResponse,
    };
  }
}

/**
 * n8n's pairedItem, set by the engine: an output item that is one of the node's input items (IF,
 * Filter, Switch, Sort, Limit, Merge pass them on) points at it; otherwise, as n8n assigns it for nodes
 * that do not, every output item points at the only input item, or at the input item at its position
 * when an output has as many items as the first input. Items are copied, never changed in place: the
 * same object is another node's output too.
 */
function pairOutputs(inputs: Item[][], outputs: Item[][]): Item[][] {
  const origin = new Map<Item, { item: number; input?: number }>();
  let total = 0;
  inputs.forEach((list, input) => {
    total += list.length;
    list.forEach((item, index) => {
      if (!origin.has(item)) origin.set(item, input === 0 ? { item: index } : { item: index, input });
    });
  });
  const firstLength = inputs[0]?.length ?? 0;
  return outputs.map((list) =>
    list.map((item, index) => {
      const known = origin.get(item);
      const pairedItem =
        known ?? (total === 1 ? { item: 0 } : list.length === firstLength ? { item: index } : undefined);
      if (pairedItem) return { ...item, pairedItem };
      if (item.pairedItem === undefined) return item;
      const { pairedItem: _stale, ...rest } = item;
      return rest;
    }),
  );
}

/** Where each input of a node run came from, as n8n's task data `source`. */
function sourcesOf(entry: QueueEntry, inputCount: number): Array<RunSource | null> {
  const froms =
    entry.sources ??
    Array.from({ length: Math.max(inputCount, 1) }, (_, i) =>
      i === (entry.inputIndex ?? 0) ? entry.from : undefined,
    );
  return froms.map((from) =>
    from
      ? { previousNode: from.name, previousNodeOutput: from.outputIndex, previousNodeRun: from.runIndex }
      : null,
  );
}

/**
 * The item of node `name` that input item `index` of the running node comes from, following
 * pairedItem and the runs' sources back (n8n's `$('Node').item`); undefined when the lineage breaks.
 */
function pairedItemOf(
  state: RunState,
  entry: QueueEntry,
  inputs: Item[][],
  name: string,
  index: number,
): Item | undefined {
  const inputIndex = entry.sources ? 0 : (entry.inputIndex ?? 0);
  let item = (inputs[inputIndex] ?? inputs[0])?.[index];
  const from = entry.sources ? entry.sources[0] : entry.from;
  let at = from ? { node: from.name, output: from.outputIndex, run: from.runIndex } : undefined;
  for (let steps = 0; item && at && steps < 1_000; steps++) {
    if (at.node === name) return item;
    const paired = item.pairedItem;
    if (!paired) return undefined;
    const source = state.runData[at.node]?.[at.run]?.source?.[paired.input ?? 0];
    if (!source) return undefined;
    item =
      state.runData[source.previousNode]?.[source.previousNodeRun]?.output[source.previousNodeOutput]?.[
        paired.item
      ];
    at = { node: source.previousNode, output: source.previousNodeOutput, run: source.previousNodeRun };
  }
  return undefined;
}

function timeoutMessage(deadline: { seconds: number }): string {
  return `The execution ran past its executionTimeout (${deadline.seconds} s) and was stopped`;
}

/**
 * A node's run, unless the execution's deadline passes or it is stopped first: then the run ends at
 * once and the node is left to end within its own bounds (n8n cancels the node's promise likewise).
 */
function interruptible(work: Promise<NodeRun>, ctx: RunContext): Promise<NodeRun | { interrupted: string }> {
  const { deadline, stopSignal } = ctx;
  if (!deadline && !stopSignal) return work;
  if (stopSignal?.aborted) return Promise.resolve({ interrupted: STOPPED });
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(timer);
      stopSignal?.removeEventListener('abort', onStop);
    };
    const onStop = () => {
      settle();
      resolve({ interrupted: STOPPED });
    };
    if (deadline)
      timer = setTimeout(
        () => {
          settle();
          resolve({ interrupted: timeoutMessage(deadline) });
        },
        Math.max(0, deadline.at - Date.now()),
      );
    stopSignal?.addEventListener('abort', onStop, { once: true });
    work.then(
      (done) => {
        settle();
        resolve(done);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

const STOPPED = 'The execution was stopped';

/** `settings.expressionLanguage`: JavaScript (n8n's) unless the workflow chose JSONata. */
export function expressionLanguageOf(def: WorkflowDefinition): ExpressionLanguage {
  return def.settings?.expressionLanguage === 'jsonata' ? 'jsonata' : 'javascript';
}

/** A node's latest run as `$('Name')` sees it: the first output holding items (IF's true or false). */
function snapshotOf(run: Run, name: string): NodeSnapshot | undefined {
  const runs = run.state.runData[name];
  const last = runs?.[runs.length - 1];
  const node = run.graph.node(name);
  if (!last || !node) return undefined;
  const context = run.state.nodeContext?.[name];
  return {
    items: last.output.find((items) => items.length > 0) ?? [],
    params: node.parameters,
    runIndex: runs.length - 1,
    ...(context ? { context: scalarsOf(context) } : {}),
  };
}

/** A node context's plain values: its lists (a loop's items) stay out of every expression's data. */
function scalarsOf(context: NodeContext): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(context)) {
    if (value === null || typeof value !== 'object') out[key] = value;
  }
  return out;
}

function padInputs(inputs: Item[][], count: number): Item[][] {
  const out = inputs.slice(0, Math.max(count, 1));
  while (out.length < count) out.push([]);
  return out;
}

function executionInfo(
  ctx: RunContext | undefined,
  waitIndex: number,
): { id: string; mode: string; resumeUrl: string } {
  if (!ctx) return { id: '', mode: 'manual', resumeUrl: '' };
  return {
    id: ctx.executionId,
    mode: ctx.mode,
    resumeUrl: resumeUrlOf(ctx.resumeUrlBase, ctx.executionId, ctx.resumeSignature?.(waitIndex)),
  };
}

/** `{base}/{executionId}?signature=…`: what `$execution.resumeUrl` and the execution view show. */
export function resumeUrlOf(base: string, executionId: string, signature: string | undefined): string {
  const url = `${base.replace(/\/+$/, '')}/${executionId}`;
  return signature ? `${url}?signature=${signature}` : url;
}
