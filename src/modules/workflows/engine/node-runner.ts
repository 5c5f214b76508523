import {
  containsExpression,
  type ExpressionData,
  type ExpressionEvaluator,
  expressionData,
} from './expressions.js';
import { NodeOperationError, type NodeResult, type NodeType } from './node-type.js';
import { checkParameters, withDefaults } from './parameters.js';
import type { EngineDeps, Item, NodeError, NodeRunData, WorkflowNode } from './types.js';

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
  /** Expression data without `$json` (added per item). */
  data: Omit<ExpressionData, 'json'>;
}

/** Runs one node: resolves its parameters, times it, captures its error (or turns it into items). */
export async function runNode(args: RunNodeArgs): Promise<NodeRun> {
  const { nodeType, node, inputs, deps, evaluator, data } = args;
  const items = inputs[0] ?? [];
  const startedAt = deps.now();
  const t0 = performance.now();
  const input = inputs.flat();
  const isStatic = !containsExpression(node.parameters);
  const params = async (index: number): Promise<unknown> => {
    if (isStatic) return resolveChecked(nodeType, node.parameters);
    const resolved = await evaluator.resolve(node.parameters, expressionData(data, items, index));
    return resolveChecked(nodeType, resolved);
  };
  try {
    const result = await nodeType.execute({
      node,
      inputs,
      items,
      params,
      deps,
      execution: data.execution,
      credential: (id) => deps.credential(id),
    });
    return { runData: record(startedAt, t0, input, result.kind === 'wait' ? [] : result.output), result };
  } catch (err) {
    const error = toNodeError(err, node.name);
    if (node.continueOnFail) {
      const base = items.length > 0 ? items : [{ json: {} }];
      const out: Item[] = base.map(() => ({
        json: {
          error: error.message,
          ...(error.problems
            ? { problems: error.problems.map((p) => ({ path: p.path, message: p.message })) }
            : {}),
        },
      }));
      return {
        runData: { ...record(startedAt, t0, input, [out]), error },
        result: { kind: 'output', output: [out] },
      };
    }
    return { runData: { ...record(startedAt, t0, input, []), error }, result: null };
  }
}

const schemaChecked = new WeakMap<object, unknown>();

function resolveChecked(nodeType: NodeType, params: unknown): unknown {
  if (params !== null && typeof params === 'object') {
    const hit = schemaChecked.get(params);
    if (hit !== undefined) return hit;
  }
  const problems = checkParameters(nodeType.schema, params, 'parameters', false);
  if (problems.length > 0) {
    throw new NodeOperationError(
      `Invalid parameters: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { problems },
    );
  }
  const value = withDefaults(nodeType.schema, params);
  if (params !== null && typeof params === 'object') schemaChecked.set(params, value);
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

export function toNodeError(err: unknown, nodeName: string): NodeError {
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
