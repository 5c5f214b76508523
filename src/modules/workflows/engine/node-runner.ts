import { redactValues } from '../../../core/redact.js';
import { credentialSecrets, withoutSecrets, withoutSecretsInErrorItems } from './credential-redaction.js';
import { defaultTimezone } from './expression-sandbox.js';
import {
  CodeError,
  containsExpression,
  type ExpressionData,
  type ExpressionEvaluator,
  expressionData,
} from './expressions.js';
import type { AttachedNode } from './graph.js';
import {
  continuesOnFail,
  type NodeExecutionContext,
  NodeOperationError,
  type NodeResult,
  type NodeType,
  type SubNodeHandle,
} from './node-type.js';
import { checkParameters, converted, isValid, withDefaults } from './parameters.js';
import { runPython } from './python/run-python.js';
import {
  type AiConnectionType,
  DEFAULT_CODE_TIMEOUT_MS,
  type EngineDeps,
  type Item,
  type NodeContext,
  type NodeError,
  type NodeRunData,
  type StreamChunk,
  type WorkflowNode,
} from './types.js';

export interface NodeRun {
  runData: NodeRunData;
  /** null when the node failed without continueOnFail. */
  result: NodeResult | null;
}

export interface RunNodeArgs {
  nodeType: NodeType;
  node: WorkflowNode;
  inputs: Item[][];
  deps: EngineDeps;
  evaluator: ExpressionEvaluator;
  /** The node's context (n8n's node context), changed in place by the node; a fresh one if absent. */
  context?: NodeContext;
  /** The execution's node-run count, for sub-workflow calls (NodeExecutionContext.nodeRuns). */
  nodeRuns?: { used(): number; add(runs: number): void };
  /** Expression data without `$json` (added per item). */
  data: Omit<ExpressionData, 'json'>;
  /** Tries made before this run (a retry resumed from its checkpoint after a restart). */
  triesBefore?: number;
  /** Called before each retry's wait, with the tries made so far and the wait (the engine checkpoints). */
  beforeRetry?: (tries: number, waitMs: number) => Promise<void>;
  /** The workflow's sub-node connections (n8n's ai_*), for a root node; absent: it has none. */
  subNodes?: SubNodeLookup;
  /** The execution's deadline (ms since the epoch), for nodes that bound their own waits. */
  deadlineAt?: number;
  /** The execution streams its answer (RunContext.onChunk): the node may send chunks. */
  onChunk?: (chunk: StreamChunk) => void;
  /** The nodes upstream of a node by main connections (NodeExecutionContext.parentNodes). */
  ancestors?: (name: string) => readonly WorkflowNode[];
}

/** A run's arguments with the secrets its node and sub-nodes were handed so far. */
type AttemptArgs = RunNodeArgs & { revealed: Set<string> };

/** How a root node finds its sub-nodes and their types. */
export interface SubNodeLookup {
  attached(root: string, type: AiConnectionType): AttachedNode[];
  typeOf(node: WorkflowNode): NodeType | undefined;
}

/** Sub-nodes nest (a vector store tool has a store, which has an embedder); deeper is refused. */
const MAX_SUB_NODE_DEPTH = 8;

/** n8n's per-node settings the runner honours (stored on the node as n8n exports them). */
interface NodeSettings {
  onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
  retryOnFail?: boolean;
  maxTries?: number;
  waitBetweenTries?: number;
  alwaysOutputData?: boolean;
  executeOnce?: boolean;
}

/** n8n's defaults: 3 tries, 1 s apart; n8n's editor bounds them to 2–5 tries and 0–5 s. */
const DEFAULT_TRIES = 3;
const DEFAULT_WAIT_MS = 1_000;

/**
 * Runs one node: resolves its parameters, times it, captures its error (or turns it into items), with
 * n8n's node settings: `executeOnce` (first item only), `retryOnFail` (`maxTries`, `waitBetweenTries`),
 * `onError` (continue on the regular output, or on an extra error output after the node's own) and
 * `alwaysOutputData` (one empty item when the node output none).
 */
export async function runNode(args: RunNodeArgs): Promise<NodeRun> {
  const settings = args.node as WorkflowNode & NodeSettings;
  const inputs = settings.executeOnce ? args.inputs.map((list) => list.slice(0, 1)) : args.inputs;
  const tries = settings.retryOnFail ? clamp(settings.maxTries ?? DEFAULT_TRIES, 1, 5) : 1;
  const startedAt = args.deps.now();
  const t0 = performance.now();
  let attempt = Math.min(args.triesBefore ?? 0, tries - 1);
  // Every credential value and OAuth2 token the node (or a sub-node) read: none may appear in the
  // error an execution keeps, whatever the node or an upstream's answer put in its message.
  const revealed = new Set<string>();
  for (;;) {
    attempt++;
    try {
      const result = await attemptNode({ ...args, inputs, revealed });
      // A node that continues on fail writes its errors into items itself (n8n's `{error: message}`).
      if (result.kind === 'output' && revealed.size > 0 && continuesOnFail(settings))
        result.output = withoutSecretsInErrorItems(result.output, [...revealed]);
      if (result.kind === 'output' && settings.alwaysOutputData && result.output.every((o) => o.length === 0))
        result.output = [[{ json: {} }], ...result.output.slice(1)];
      const runData = record(startedAt, t0, inputs.flat(), result.kind === 'wait' ? [] : result.output);
      if (result.kind === 'output' && result.logs && result.logs.length > 0) runData.logs = result.logs;
      return { runData, result };
    } catch (err) {
      if (attempt < tries) {
        const waitMs = clamp(settings.waitBetweenTries ?? DEFAULT_WAIT_MS, 0, 5_000);
        await args.beforeRetry?.(attempt, waitMs);
        await sleep(waitMs);
        continue;
      }
      return failed(
        args,
        inputs,
        settings,
        withoutSecrets(err, [...revealed], { shapes: false }),
        startedAt,
        t0,
      );
    }
  }
}

async function attemptNode(args: AttemptArgs): Promise<NodeResult> {
  const { nodeType, node } = args;
  return nodeType.execute(contextOf(args, node, nodeType, 0));
}

/**
 * What a node sees: its parameters resolved over the run's items. A sub-node gets the same, over its
 * root's items, so `{{ $json.… }}` in a chat model's or tool's parameters reads the root's item.
 */
function contextOf(
  args: AttemptArgs,
  node: WorkflowNode,
  nodeType: NodeType,
  depth: number,
): NodeExecutionContext<never> {
  const { inputs, deps, evaluator, data } = args;
  const context = args.context ?? {};
  const items = inputs[0] ?? [];
  const { resolvable, raw } = splitRaw(node.parameters, nodeType.rawParameters ?? []);
  const isStatic = !containsExpression(resolvable);
  const params = async (index: number): Promise<unknown> => {
    if (isStatic && raw.length === 0) {
      staticParams.add(node.parameters);
      return resolveChecked(nodeType, node.parameters);
    }
    const resolved = isStatic
      ? resolvable
      : await evaluator.resolve(resolvable, {
          ...expressionData(data, items, index),
          input: items,
          itemIndex: index,
          params: node.parameters,
        });
    return resolveChecked(nodeType, restoreRaw(resolved, raw));
  };
  const paramsFor = async (item: Item, extra?: Record<string, unknown>): Promise<unknown> => {
    const resolved = await evaluator.resolve(resolvable, {
      ...expressionData(data, [item], 0),
      input: [item],
      itemIndex: 0,
      params: node.parameters,
      ...(extra ? { extra } : {}),
    });
    return resolveChecked(nodeType, restoreRaw(resolved, raw));
  };
  const ctx: NodeExecutionContext<unknown> = {
    node,
    inputs,
    items,
    params,
    paramsFor,
    deps,
    context,
    nodeRuns: args.nodeRuns ?? { used: () => 0, add: () => undefined },
    execution: data.execution,
    ...(args.deadlineAt !== undefined ? { deadlineAt: args.deadlineAt } : {}),
    workflow: { id: data.workflow.id, name: data.workflow.name },
    parentNodes: () => args.ancestors?.(node.name) ?? [],
    timezone: data.timezone ?? defaultTimezone(),
    credential: async (id) => {
      const credential = await deps.credential(id, data.workflow.id);
      for (const secret of credentialSecrets(credential)) args.revealed.add(secret);
      return credential;
    },
    oauth2Token: async (id, renew) => {
      if (!deps.oauth2Token) throw new Error('OAuth2 credentials are not available here');
      const token = await deps.oauth2Token(id, data.workflow.id, renew);
      args.revealed.add(token.accessToken);
      return token;
    },
    runCode: (code, mode) =>
      evaluator.runCode(
        code,
        mode,
        { ...data, json: {}, input: items, params: node.parameters },
        { timeoutMs: deps.codeTimeoutMs ?? DEFAULT_CODE_TIMEOUT_MS },
      ),
    runPython: (code, mode, flavour) =>
      runPython(
        code,
        mode,
        flavour,
        { ...data, json: {}, input: items, params: node.parameters },
        { timeoutMs: deps.codeTimeoutMs ?? DEFAULT_CODE_TIMEOUT_MS },
        deps.tenant ?? 'default',
      ),
    evaluate: (source, index, extra) =>
      evaluator.evaluate(source, {
        ...expressionData(data, items, index),
        input: items,
        itemIndex: index,
        params: node.parameters,
        extra,
      }),
    subNodes: (type) => subNodesOf(args, node, type, depth),
    redact: (text) => (args.revealed.size === 0 ? text : redactValues(text, args.revealed)),
  };
  const onChunk = args.onChunk;
  if (onChunk && depth === 0)
    ctx.sendChunk = (type, itemIndex, content) => {
      const metadata = {
        nodeId: node.id,
        nodeName: node.name,
        itemIndex,
        runIndex: data.runIndex ?? 0,
        timestamp: Date.now(),
      };
      const text = typeof content === 'string' || content === undefined ? content : JSON.stringify(content);
      onChunk(text === undefined ? { type, metadata } : { type, content: text, metadata });
    };
  return ctx as NodeExecutionContext<never>;
}

function subNodesOf(
  args: AttemptArgs,
  root: WorkflowNode,
  type: AiConnectionType,
  depth: number,
): SubNodeHandle[] {
  const lookup = args.subNodes;
  if (!lookup) return [];
  return lookup.attached(root.name, type).map(({ node, inputIndex }) => ({
    name: node.name,
    type: node.type,
    inputIndex,
    supply: async (itemIndex) => {
      if (depth >= MAX_SUB_NODE_DEPTH)
        throw new NodeOperationError(
          `Sub-nodes nest deeper than ${MAX_SUB_NODE_DEPTH} levels at '${node.name}'`,
        );
      const subType = lookup.typeOf(node);
      if (!subType?.supply)
        throw new NodeOperationError(`Node '${node.name}' (${node.type}) supplies nothing`);
      try {
        return await subType.supply(contextOf(args, node, subType, depth + 1), itemIndex);
      } catch (error) {
        // The root fails naming the sub-node that did.
        if (error instanceof NodeOperationError && error.message.includes(`'${node.name}'`)) throw error;
        const message = error instanceof Error ? error.message : String(error);
        throw new NodeOperationError(`${node.name}: ${message}`, {
          ...(error instanceof NodeOperationError && error.description
            ? { description: error.description }
            : {}),
        });
      }
    },
  }));
}

/** The run of a node that failed for good: an error, or items on the output `onError` names. */
function failed(
  args: RunNodeArgs,
  inputs: Item[][],
  settings: NodeSettings & WorkflowNode,
  err: unknown,
  startedAt: Date,
  t0: number,
): NodeRun {
  const { node, nodeType } = args;
  const error = toNodeError(err, node.name);
  const logs = err instanceof CodeError || err instanceof NodeOperationError ? err.logs : undefined;
  const withLogs = logs?.length ? { logs } : {};
  const onError = settings.onError ?? (node.continueOnFail ? 'continueRegularOutput' : 'stopWorkflow');
  if (onError === 'stopWorkflow') {
    return { runData: { ...record(startedAt, t0, inputs.flat(), []), error, ...withLogs }, result: null };
  }
  const items = inputs[0] ?? [];
  if (onError === 'continueRegularOutput' && nodeType.passInputOnFail) {
    const output = [items];
    return {
      runData: { ...record(startedAt, t0, inputs.flat(), output), error, ...withLogs },
      result: { kind: 'output', output },
    };
  }
  const base = items.length > 0 ? items : [{ json: {} }];
  const out: Item[] = base.map(() => ({
    json: {
      error: error.message,
      ...(error.problems
        ? { problems: error.problems.map((p) => ({ path: p.path, message: p.message })) }
        : {}),
    },
  }));
  let output: Item[][] = [out];
  if (onError === 'continueErrorOutput') {
    const regular = nodeType.outputs ? nodeType.outputs(node.parameters) : 1;
    output = [...Array.from({ length: regular }, () => []), out];
  }
  return {
    runData: { ...record(startedAt, t0, inputs.flat(), output), error, ...withLogs },
    result: { kind: 'output', output },
  };
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Number.isFinite(n) ? n : lo));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Parameters split into what is resolved before the node runs and the raw parts it evaluates itself. */
function splitRaw(
  params: Record<string, unknown>,
  paths: readonly string[],
): { resolvable: Record<string, unknown>; raw: Array<{ path: string[]; value: unknown }> } {
  const raw: Array<{ path: string[]; value: unknown }> = [];
  if (paths.length === 0) return { resolvable: params, raw };
  const resolvable = structuredClone(params);
  for (const dotted of paths) {
    const path = dotted.split('.');
    let cur: unknown = resolvable;
    for (const key of path.slice(0, -1))
      cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[key] : undefined;
    const last = path[path.length - 1] as string;
    if (cur && typeof cur === 'object' && Object.hasOwn(cur, last)) {
      raw.push({ path, value: (cur as Record<string, unknown>)[last] });
      delete (cur as Record<string, unknown>)[last];
    }
  }
  return { resolvable, raw };
}

function restoreRaw(resolved: unknown, raw: Array<{ path: string[]; value: unknown }>): unknown {
  if (raw.length === 0) return resolved;
  const out = structuredClone(resolved) as Record<string, unknown>;
  for (const { path, value } of raw) {
    let cur: Record<string, unknown> = out;
    for (const key of path.slice(0, -1)) {
      if (!cur[key] || typeof cur[key] !== 'object') cur[key] = {};
      cur = cur[key] as Record<string, unknown>;
    }
    cur[path[path.length - 1] as string] = value;
  }
  return out;
}

const schemaChecked = new WeakMap<object, unknown>();
const staticParams = new WeakSet<object>();
/** Parameters exactly as stored (no expression evaluated): converting them would hide a bad save. */
const isStaticObject = (v: unknown) => v !== null && typeof v === 'object' && staticParams.has(v);

function resolveChecked(nodeType: NodeType, given: unknown): unknown {
  if (given !== null && typeof given === 'object') {
    const hit = schemaChecked.get(given);
    if (hit !== undefined) return hit;
  }
  // Valid as they are (the common case): Convert would leave every value as it is.
  const defaulted = withDefaults(nodeType.schema, given);
  if (isValid(nodeType.schema, defaulted)) {
    if (given !== null && typeof given === 'object') schemaChecked.set(given, defaulted);
    return defaulted;
  }
  // n8n does not type-check evaluated parameters: a number where text is expected is that text
  // (`{{ $json.count }}` as a header value). Primitives convert; anything else is still refused.
  const params = nodeType.versions && !isStaticObject(given) ? converted(nodeType.schema, given) : given;
  const problems = checkParameters(nodeType.schema, params, 'parameters', false);
  if (problems.length > 0) {
    throw new NodeOperationError(
      `Invalid parameters: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { problems },
    );
  }
  const value = withDefaults(nodeType.schema, params);
  if (given !== null && typeof given === 'object') schemaChecked.set(given, value);
  return value;
}

function record(startedAt: Date, t0: number, input: Item[], output: Item[][]): NodeRunData {
  return {
    startTime: startedAt.toISOString(),
    executionTime: Math.round((performance.now() - t0) * 1000) / 1000,
    input,
    output,
  };
}

function toNodeError(err: unknown, nodeName: string): NodeError {
  if (err instanceof NodeOperationError) {
    return {
      message: err.message,
      node: nodeName,
      ...(err.description !== undefined ? { description: err.description } : {}),
      ...(err.problems !== undefined ? { problems: err.problems } : {}),
    };
  }
  if (err instanceof Error) return { message: err.message, node: nodeName };
  return { message: String(err), node: nodeName };
}
