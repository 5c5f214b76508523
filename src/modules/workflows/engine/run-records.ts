import type { NodeSnapshot } from './expressions.js';
import type { WorkflowGraph } from './graph.js';
import type { Item, NodeContext, NodeError, NodeRunData, RunState } from './types.js';

/** Appends a run of node `name` to the execution's run data; it is the last node executed. */
export function recordRun(state: RunState, name: string, run: NodeRunData): void {
  const list = state.runData[name] ?? [];
  list.push(run);
  state.runData[name] = list;
  state.lastNodeExecuted = name;
}

/** The index of the latest run of `name` (0 when it has none). */
export function latestRunIndex(state: RunState, name: string): number {
  return Math.max(0, (state.runData[name]?.length ?? 1) - 1);
}

/** Sets the output of the latest run of `name` (a wait node passing its items on), if it has one. */
export function setLatestOutput(state: RunState, name: string, items: Item[]): void {
  const runs = state.runData[name];
  const last = runs?.[runs.length - 1];
  if (last) last.output = [items];
}

/** The run of a node cut off by a stop or the deadline: no output, and the reason. */
export function interruptedRun(
  startedAt: Date,
  endedAt: Date,
  inputs: Item[][],
  error: NodeError,
): NodeRunData {
  return {
    startTime: startedAt.toISOString(),
    executionTime: endedAt.getTime() - startedAt.getTime(),
    input: inputs.flat(),
    output: [],
    error,
  };
}

/** A pinned node's run: the pinned items show as its output. */
export function pinnedRun(at: Date, inputs: Item[][], pinned: Item[]): NodeRunData {
  return { startTime: at.toISOString(), executionTime: 0, input: inputs.flat(), output: [pinned] };
}

/** Keeps the context of node `name` in the run state once it holds something. */
export function keepContext(state: RunState, name: string, context: NodeContext): void {
  if (Object.keys(context).length === 0) return;
  state.nodeContext ??= {};
  state.nodeContext[name] = context;
}

/** A node's latest run as `$('Name')` sees it: the first output holding items (IF's true or false). */
export function snapshotOf(state: RunState, graph: WorkflowGraph, name: string): NodeSnapshot | undefined {
  const runs = state.runData[name];
  const last = runs?.[runs.length - 1];
  const node = graph.node(name);
  if (!last || !node) return undefined;
  const context = state.nodeContext?.[name];
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
