import type { Static, TSchema } from 'typebox';
import type {
  CheckLimits,
  EngineDeps,
  Item,
  ValidationProblem,
  WebhookResponse,
  WorkflowNode,
} from './types.js';

/** What a node's `execute` returns: items per output, or a pause, or a webhook response. */
export type NodeResult =
  | { kind: 'output'; output: Item[][] }
  | { kind: 'wait'; waitTill: Date | null }
  | { kind: 'respond'; output: Item[][]; response: WebhookResponse };

/** What a node sees while it runs. Parameters are resolved per item ($json = that item). */
export interface NodeExecutionContext<P> {
  node: WorkflowNode;
  /** Items per input index (merge has two inputs; the others one). */
  inputs: Item[][];
  /** Items of input 0. */
  items: Item[];
  /** The node's parameters for item `index` (expressions evaluated, defaults applied, schema checked). */
  params(index: number): Promise<P>;
  deps: EngineDeps;
  execution: { id: string; mode: string; resumeUrl: string };
  /** Decrypted credential data by id (through EngineDeps). */
  credential(id: string): Promise<Record<string, string>>;
}

export interface NodeType<S extends TSchema = TSchema> {
  type: string;
  /** Parameter schema (TypeBox); expression strings (`={{…}}`) may stand in for any value. */
  schema: S;
  /** A trigger starts a run; a workflow may hold at most one. */
  trigger?: boolean;
  /** Number of inputs (default 1; a trigger has 0; merge 2). */
  inputs?: number;
  /** Number of outputs for the given (static) parameters; default 1. */
  outputs?(params: Record<string, unknown>): number;
  /** Extra checks beyond the schema (e.g. a dedupe key must be an expression). */
  check?(params: Static<S>, limits: CheckLimits): ValidationProblem[];
  execute(ctx: NodeExecutionContext<Static<S>>): Promise<NodeResult>;
}

/** Node types by type name. */
export type NodeRegistry = ReadonlyMap<string, NodeType>;

/** Declares a node type, keeping its parameter type for `execute` and erasing it for the registry. */
export function defineNode<S extends TSchema>(node: NodeType<S>): NodeType {
  return node as unknown as NodeType;
}

/** An error a node raises on purpose: its message and description land in the run data. */
export class NodeOperationError extends Error {
  readonly description: string | undefined;
  readonly problems: ValidationProblem[] | undefined;

  constructor(message: string, options: { description?: string; problems?: ValidationProblem[] } = {}) {
    super(message);
    this.name = 'NodeOperationError';
    this.description = options.description;
    this.problems = options.problems;
  }
}

export const output = (...outputs: Item[][]): NodeResult => ({ kind: 'output', output: outputs });
