import { type Static, type TSchema, Type } from 'typebox';
import type { CodeRun } from './expressions.js';
import type {
  AiConnectionType,
  CheckLimits,
  CodeLog,
  EngineDeps,
  Item,
  NodeContext,
  OAuth2SigningToken,
  StreamChunk,
  ValidationProblem,
  WebhookNodeInfo,
  WebhookResponse,
  WorkflowNode,
} from './types.js';

/** What a node's `execute` returns: items per output, or a pause, or a webhook response. */
export type NodeResult =
  | { kind: 'output'; output: Item[][]; logs?: CodeLog[] }
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
  /**
   * The node's parameters resolved over another item (`$json` = `item.json`) with extra variables: an AI
   * tool's parameters over the model's arguments, `$fromAI()` reading `extra.$fromAI`.
   */
  paramsFor(item: Item, extra?: Record<string, unknown>): Promise<P>;
  deps: EngineDeps;
  /**
   * This node's own state across its runs in this execution (n8n's `getContext('node')`): change it in
   * place; the engine keeps it in RunState when the run succeeds. Plain JSON only.
   */
  context: NodeContext;
  /**
   * The execution's node runs so far (with those of sub-workflows it waited for): a waited
   * sub-workflow starts from it and its runs are added back, so a call tree shares one bound.
   */
  nodeRuns: { used(): number; add(runs: number): void };
  execution: { id: string; mode: string; resumeUrl: string };
  /**
   * When the execution's `executionTimeout` ends it (ms since the epoch), if it has one: the engine
   * moves on then, so a node's own waits (a database query) should end by then too.
   */
  deadlineAt?: number;
  workflow: { id: string; name: string };
  /** The nodes upstream of this one by main connections, nearest first (n8n's `getParentNodes`). */
  parentNodes?(): readonly WorkflowNode[];
  /** The workflow's time zone (`settings.timezone`, else the instance's), as `$now` has it. */
  timezone?: string;
  /** Decrypted credential data by id (through EngineDeps). */
  credential(id: string): Promise<Record<string, string>>;
  /** An OAuth2 credential's access token by id (through EngineDeps); `renew` fetches a new one. */
  oauth2Token(id: string, renew: boolean): Promise<OAuth2SigningToken>;
  /**
   * `text` without the credential values and tokens this node (and its sub-nodes) were handed so far:
   * for an error's text a node keeps or passes on itself (a tool's answer to the model).
   */
  redact?(text: string): string;
  /**
   * Evaluates an expression over item `index` with extra variables (e.g. `$response`, `$pageCount` for
   * HTTP Request pagination), for parameters the node evaluates itself (`rawParameters`).
   */
  evaluate(source: string, index: number, extra?: Record<string, unknown>): Promise<unknown>;
  /** Runs JavaScript over the input items in the sandbox (the Code node); throws CodeError. */
  runCode(code: string, mode: 'runOnceForAllItems' | 'runOnceForEachItem'): Promise<CodeRun>;
  /**
   * Runs Python over the input items (the Code node's `python`/`pythonNative`): CPython on WebAssembly
   * in a worker thread, bounded by the same timeout; throws CodeError.
   */
  runPython?(
    code: string,
    mode: 'runOnceForAllItems' | 'runOnceForEachItem',
    flavour: 'pyodide' | 'native',
  ): Promise<CodeRun>;
  /**
   * The sub-nodes attached to this node by `type` (n8n's ai_* connections), by input index; empty for a
   * node that has none. Each supplies its part (a chat model, a tool…) for one item of this node.
   */
  subNodes(type: AiConnectionType): SubNodeHandle[];
  /**
   * n8n's `sendChunk`: present only when the execution's webhook answers as a stream (n8n's
   * `isStreaming()`); a chunk of this node's item `itemIndex`, sent to the caller at once.
   */
  sendChunk?(type: StreamChunk['type'], itemIndex: number, content?: string | Record<string, unknown>): void;
}

/** A sub-node as its root node sees it. */
export interface SubNodeHandle {
  name: string;
  type: string;
  /** The root's input index it is attached at (an agent's fallback model is at 1). */
  inputIndex: number;
  /** What the sub-node supplies for the root's item `itemIndex` (its parameters resolved over that item). */
  supply(itemIndex: number): Promise<unknown>;
}

export interface NodeType<S extends TSchema = TSchema> {
  /** n8n's type name (`n8n-nodes-base.set`) or a platform node's short name (`set`, `validate`). */
  type: string;
  /**
   * The `typeVersion`s this definition serves, for n8n types: one type may have a definition per
   * parameter shape (Set v1–v2 and v3.x differ). Absent: any version (the platform's own nodes).
   */
  versions?: readonly number[];
  /** Parameter schema (TypeBox); expression strings (`={{…}}`) may stand in for any value. */
  schema: S;
  /** A trigger starts a run; a workflow may hold at most one. */
  trigger?: boolean;
  /** Number of inputs (default 1; a trigger has 0; merge 2, or n8n Merge v3's `numberInputs`). */
  inputs?: number | ((params: Record<string, unknown>) => number);
  /** Number of outputs for the given (static) parameters; default 1. */
  outputs?(params: Record<string, unknown>): number;
  /**
   * Parameter paths (`options.pagination`) left as written when the others are resolved: the node
   * evaluates them itself, with variables only it has (n8n's rawExpressions).
   */
  rawParameters?: readonly string[];
  /**
   * Whether the run is checkpointed before this node (a long, durable step: a waited sub-workflow
   * call), so a crash while it runs resumes the execution at this node rather than losing it.
   */
  checkpoint?(params: Record<string, unknown>): boolean;
  /**
   * A webhook trigger: how its (stored) parameters register and answer — path, methods,
   * authentication, response mode, body options. The service asks the registry through
   * `webhookNodesOf`, so the engine imports no node file.
   */
  webhook?: { parse(node: WorkflowNode): WebhookNodeInfo[] };
  /**
   * A sub-node (n8n's chat models, tools, memories…): attached to a root by this connection type, it
   * never runs on its own; `supply` builds what the root gets (n8n's supplyData).
   */
  subNode?: AiConnectionType;
  /** Other connection types it may supply by its mode (a vector store: ai_vectorStore or, as a tool, ai_tool). */
  alsoSupplies?: readonly AiConnectionType[];
  /** The sub-node connection types this root node takes (n8n's ai_* inputs). */
  aiInputs?: readonly AiConnectionType[];
  /** A sub-node's part for its root's item `itemIndex`; `ctx.items` are the root's input items. */
  supply?(ctx: NodeExecutionContext<Static<S>>, itemIndex: number): Promise<unknown>;
  /**
   * A trigger that listens while its workflow is active (n8n's `trigger()` and `poll()`: an IMAP
   * mailbox, a polled feed). The service's trigger listeners start it at activation and stop it at
   * deactivation; each `emit` starts one execution with those items as the trigger's input.
   */
  listener?: {
    start(ctx: ListenerContext): Promise<ListenerHandle>;
    /** At most this many enabled nodes of the type in an account's active workflows (activation past it is refused). */
    maxPerAccount?: number;
  };
  /**
   * n8n's webhook methods (`create`/`delete`): an outside service is told where to deliver when the
   * workflow is activated (Telegram's setWebhook) and told to stop when it is deactivated. Activation
   * fails when `register` throws; `unregister` is best effort.
   */
  registration?: {
    register(ctx: RegistrationContext): Promise<void>;
    unregister(ctx: RegistrationContext): Promise<void>;
  };
  /**
   * n8n's node does not catch its own errors, so under `continueOnFail` (`onError:
   * continueRegularOutput`) n8n's engine outputs the node's first input unchanged rather than an item
   * holding the error (n8n's WorkflowExecute). Absent: the node fails into `{ error }` items.
   */
  passInputOnFail?: boolean;
  /** Extra checks beyond the schema (e.g. a dedupe key must be an expression). */
  check?(params: Static<S>, limits: CheckLimits): ValidationProblem[];
  execute(ctx: NodeExecutionContext<Static<S>>): Promise<NodeResult>;
}

/** What a registering trigger is given at activation and deactivation. */
export interface RegistrationContext {
  node: WorkflowNode;
  workflowId: string;
  /** The node's stored parameters with the schema's defaults (no item: expressions are not resolved). */
  parameters: Record<string, unknown>;
  /** The public URL of the node's webhook (`{PUBLIC_URL}/webhook/{path}`) and its path. */
  webhook: { url: string; path: string };
  /** Outbound HTTP, guarded against private addresses as executions' is. */
  http: EngineDeps['http'];
  /** Decrypted credential data by id, as the workflow may use it. */
  credential(id: string): Promise<Record<string, string>>;
}

/** What a listening trigger is given while its workflow is active. */
export interface ListenerContext {
  node: WorkflowNode;
  workflowId: string;
  /** The workflow's account (per-account bounds of a listener). */
  accountId: string;
  /** The node's stored parameters with the schema's defaults (no item: expressions are not resolved). */
  parameters: Record<string, unknown>;
  /** Outbound HTTP, the outbound-host guard, the clock and the dedupe history, as executions have them. */
  deps: EngineDeps;
  /** Decrypted credential data by id, as the workflow may use it. */
  credential(id: string): Promise<Record<string, string>>;
  /** Starts one execution with these items as the trigger's output. */
  emit(items: Item[]): Promise<void>;
  /** The listener broke (a lost connection): it is dropped and started again at the next sync. */
  failed(error: Error): void;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface ListenerHandle {
  stop(): Promise<void>;
}

/** Node types by type name and version. */
export class NodeRegistry {
  private readonly byKey = new Map<string, NodeType>();
  private readonly versionsOf = new Map<string, number[]>();

  constructor(readonly types: readonly NodeType[]) {
    for (const t of types) {
      const keys = t.versions ? t.versions.map((v) => `${t.type}@${v}`) : [t.type];
      for (const key of keys) {
        if (this.byKey.has(key)) throw new Error(`node type ${key} is defined twice`);
        this.byKey.set(key, t);
      }
      if (t.versions) this.versionsOf.set(t.type, [...(this.versionsOf.get(t.type) ?? []), ...t.versions]);
    }
  }

  /** The definition serving `type` at `version`; n8n reads a missing typeVersion as 1. */
  get(type: string, version?: number): NodeType | undefined {
    if (this.versionsOf.has(type)) return this.byKey.get(`${type}@${version ?? 1}`);
    return this.byKey.get(type);
  }

  /** The versions known for an n8n type (empty for platform types and unknown names). */
  versions(type: string): number[] {
    return [...(this.versionsOf.get(type) ?? [])].sort((a, b) => a - b);
  }

  /** Why `get` found nothing, for a 400: an unknown type, or a known type at an unknown version. */
  missing(type: unknown, version: unknown): string {
    const name = String(type);
    const known = typeof type === 'string' ? this.versions(type) : [];
    if (known.length === 0) return `unknown node type '${name}'`;
    return `node type '${name}' has no version ${String(version ?? 1)} here (supported: ${known.join(', ')})`;
  }
}

/** A node's input count for its (static) parameters. */
export function inputCount(nodeType: NodeType, parameters: Record<string, unknown>): number {
  const inputs = nodeType.inputs;
  if (typeof inputs === 'function') return inputs(parameters);
  return inputs ?? 1;
}

/** Declares a node type, keeping its parameter type for `execute` and erasing it for the registry. */
export function defineNode<S extends TSchema>(node: NodeType<S>): NodeType {
  // Erased first: inferring `S` again through a generic helper cost the type checker ~5 s.
  const erased = node as unknown as NodeType;
  addNodeSettings(erased);
  return erased;
}

/**
 * n8n's "Request Options" node setting (`requestOptions`: batching, proxy, timeout of its declarative
 * nodes). n8n exports it, empty, on nodes of every kind in some versions (112 of the templates carry
 * `{}`), and ignores it where the node makes no declarative request: an n8n type here takes it empty
 * and nothing else (a setting inside is still refused by name).
 */
const REQUEST_OPTIONS = Type.Optional(
  Type.Object(
    {},
    {
      additionalProperties: false,
      description:
        "n8n's Request Options node setting, as n8n exports it (empty); its settings are not served",
    },
  ),
);

function addNodeSettings(node: NodeType): void {
  const schema = node.schema as TSchema & { type?: unknown; properties?: Record<string, TSchema> };
  // In place, at definition (before any checker is compiled): a copy would lose TypeBox's own
  // non-enumerable markers, which defaults and checks read.
  if (
    node.versions &&
    schema.type === 'object' &&
    schema.properties &&
    !('requestOptions' in schema.properties)
  )
    schema.properties.requestOptions = REQUEST_OPTIONS;
}

/** What each kind of sub-node is called when it is run on its own. */
const SUB_NODE_NAMES: Record<AiConnectionType, string> = {
  ai_languageModel: 'A chat model',
  ai_memory: 'A memory',
  ai_tool: 'A tool',
  ai_embedding: 'An embeddings model',
  ai_vectorStore: 'A vector store',
  ai_document: 'A document loader',
  ai_textSplitter: 'A text splitter',
  ai_outputParser: 'An output parser',
  ai_retriever: 'A retriever',
};

/**
 * A sub-node (n8n's chat models, tools, memories…): no main input, and never run on its own; its root
 * calls `supply`, and a run of the sub-node itself fails naming what it is.
 */
export function defineSubNode<S extends TSchema>(
  node: Omit<NodeType<S>, 'inputs' | 'execute' | 'subNode'> & { subNode: AiConnectionType },
): NodeType {
  const name = SUB_NODE_NAMES[node.subNode];
  return defineNode<S>({
    ...node,
    inputs: 0,
    async execute() {
      throw new NodeOperationError(`${name} runs only attached to an AI node`);
    },
  });
}

/** An error a node raises on purpose: its message and description land in the run data. */
export class NodeOperationError extends Error {
  readonly description: string | undefined;
  readonly problems: ValidationProblem[] | undefined;
  /** A Code node's console output up to the failure. */
  readonly logs: CodeLog[] | undefined;

  constructor(
    message: string,
    options: { description?: string; problems?: ValidationProblem[]; logs?: CodeLog[] } = {},
  ) {
    super(message);
    this.name = 'NodeOperationError';
    this.description = options.description;
    this.problems = options.problems;
    this.logs = options.logs;
  }
}

export const output = (...outputs: Item[][]): NodeResult => ({ kind: 'output', output: outputs });

/** n8n's `continueOnFail()`: errors become items rather than failing the node. */
export function continuesOnFail(node: { continueOnFail?: boolean; onError?: string }): boolean {
  return (
    node.continueOnFail === true ||
    node.onError === 'continueRegularOutput' ||
    node.onError === 'continueErrorOutput'
  );
}
