import type { CpuPool } from '../../../core/cpu/index.js';
import type { OutboundRequest, OutboundResponse } from '../../../core/http/outbound.js';
import type { OutboundHostGuard } from '../../../core/http/outbound-host.js';

/**
 * The contract between the workflow engine (pure, no HTTP) and the workflow service
 * (storage, API, webhooks, queue). n8n's data model, so its users feel at home.
 */

export interface WorkflowNode {
  id: string;
  name: string;
  type: string;
  typeVersion?: number;
  position: [number, number];
  parameters: Record<string, unknown>;
  /**
   * Credentials by slot (credential type) name: an id or name (`{ hmac: 'cred_…' }`), or n8n's export
   * shape `{ httpHeaderAuth: { id, name } }`. Read with `credentialRefOf`.
   */
  credentials?: Record<string, CredentialRef>;
  /** On failure, pass the error on as an item instead of failing the execution. */
  continueOnFail?: boolean;
  disabled?: boolean;
  /** n8n's node settings (INode), checked at save time (schemas.ts); absent means n8n's default. */
  onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
  retryOnFail?: boolean;
  /** 1–5 tries in all (n8n's default 3) when retryOnFail. */
  maxTries?: number;
  /** 0–5000 ms (n8n's default 1000) when retryOnFail. */
  waitBetweenTries?: number;
  alwaysOutputData?: boolean;
  executeOnce?: boolean;
  /** Kept for n8n's editor, never run. */
  notes?: string;
  notesInFlow?: boolean;
  webhookId?: string;
  color?: string;
}

export type CredentialRef = string | { id?: string | null; name?: string };

/** The id (or, failing that, the name) a credential reference points at, or null. */
export function credentialRefOf(ref: CredentialRef | undefined): string | null {
  if (typeof ref === 'string') return ref === '' ? null : ref;
  if (ref && typeof ref === 'object') return ref.id || ref.name || null;
  return null;
}

/**
 * n8n's sub-node connection types (`@n8n/n8n-nodes-langchain`): a sub-node (a chat model, a tool, a
 * memory…) is attached to a root node (an agent, a chain) by one of these instead of `main`.
 */
export const AI_CONNECTION_TYPES = [
  'ai_languageModel',
  'ai_memory',
  'ai_tool',
  'ai_embedding',
  'ai_vectorStore',
  'ai_document',
  'ai_textSplitter',
  'ai_outputParser',
  'ai_retriever',
] as const;
export type AiConnectionType = (typeof AI_CONNECTION_TYPES)[number];

export interface ConnectionTarget {
  node: string;
  type: 'main' | AiConnectionType;
  index: number;
}

/**
 * `{[fromNodeName]: {main: [[target, …] per output index]}}`; a sub-node's are under its connection
 * type instead (`{ai_languageModel: [[{node: 'AI Agent', type: 'ai_languageModel', index: 0}]]}`).
 */
type Connections = Record<
  string,
  { main?: ConnectionTarget[][] } & { [K in AiConnectionType]?: ConnectionTarget[][] }
>;

export interface WorkflowDefinition {
  id: string;
  name: string;
  nodes: WorkflowNode[];
  connections: Connections;
  settings?: Record<string, unknown>;
}

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface Item {
  json: Record<string, Json>;
  /** n8n's binary data by property name (`data`, `file0`, …): base64 bytes and metadata. */
  binary?: Record<string, BinaryData>;
  /**
   * n8n's lineage: the input item this output item came from (`input`: which input, when not the
   * first). Set by the engine; `$('Node').item` follows it back.
   */
  pairedItem?: { item: number; input?: number };
}

/** Where one input of a node run came from (n8n's task data `source`). */
export interface RunSource {
  previousNode: string;
  previousNodeOutput: number;
  previousNodeRun: number;
}

/** n8n's IBinaryData in its in-memory mode. */
export interface BinaryData {
  /** The bytes, base64. */
  data: string;
  mimeType: string;
  fileName?: string;
  fileExtension?: string;
  fileType?: 'image' | 'video' | 'audio' | 'text' | 'json' | 'pdf';
  /** Human-readable, as n8n shows it (`1.2 kB`). */
  fileSize?: string;
}

export interface NodeError {
  message: string;
  description?: string;
  node?: string;
  /** Every problem found, for nodes that check data (e.g. `validate`): a 400-style list. */
  problems?: ValidationProblem[];
}

/** One run of one node, as kept in an execution's data. */
export interface NodeRunData {
  startTime: string;
  /** Duration in milliseconds. */
  executionTime: number;
  input: Item[];
  /** Output items per output index. */
  output: Item[][];
  error?: NodeError;
  /** Per input: the node run its items came from (null: none, a trigger's input). */
  source?: Array<RunSource | null>;
  /** What a Code node's `console` wrote, in order (bounded). */
  logs?: CodeLog[];
}

/** A node run the engine recorded, as `RunContext.onNodeFinished` hears of it. */
export interface NodeFinished {
  nodeName: string;
  nodeType: string;
  /** Its index among the node's runs in this execution (a loop runs a node more than once). */
  runIndex: number;
  /** The run as stored in the run data: times, input, output, error. */
  data: NodeRunData;
}

export interface CodeLog {
  level: string;
  message: string;
}

/** What the engine persists between runs; enough to resume a waiting execution. */
export interface RunState {
  runData: Record<string, NodeRunData[]>;
  lastNodeExecuted: string | null;
  error: NodeError | null;
  /** Nodes still to run, in order, with their input: the resume point of a waiting execution. */
  pending: Array<{
    node: string;
    input: Item[];
    /** Input index of `node` the items arrive on (merge has two); default 0. */
    inputIndex?: number;
    /** Set on the paused `wait` node itself: on resume it passes its input (or the resume items) on. */
    waiting?: boolean;
    /** The node and output the items came from (`$prevNode`). */
    from?: { name: string; outputIndex: number; runIndex: number };
    /** A checkpointed node run (a retry's wait, a sub-workflow call): all its inputs, run as they are. */
    inputs?: Item[][];
    /** A retry's wait: the tries the node had made before the checkpoint. */
    attempt?: number;
  }>;
  /** How many times the execution paused and went on: each pause has its own resume signature. */
  waitIndex?: number;
  /**
   * n8n's per-execution node context by node name (Loop Over Items keeps its remaining and processed
   * items here), so a loop paused at a Wait goes on where it was, in any process. Plain JSON.
   */
  nodeContext?: Record<string, NodeContext>;
  /** Node runs so far over every stretch of the execution, bounded by EngineDeps.maxNodeRuns. */
  nodeRuns?: number;
}

/** What one node keeps for itself across its runs in one execution. */
export type NodeContext = Record<string, Json>;

/** A response a workflow sets for its webhook (respondToWebhook node). */
export interface WebhookResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
  /** A binary answer (Respond to Webhook `binary`, Webhook `firstEntryBinary`): these bytes, base64, not `body`. */
  bodyBase64?: string;
}

export type ExecutionStatus = 'success' | 'error' | 'waiting' | 'canceled';

export interface ExecutionOutcome {
  status: ExecutionStatus;
  state: RunState;
  /** For `waiting`: when to resume (null = only by its resume URL). */
  waitTill: Date | null;
  /** Output items of the last node that ran. */
  lastItems: Item[];
  webhookResponse: WebhookResponse | null;
}

/** What a request signs with from an OAuth2 credential (n8n's token `sign`). */
export interface OAuth2SigningToken {
  accessToken: string;
  /** The token answer's token_type, lowercased ('bearer' when the provider said none). */
  tokenType: string;
  /** The status after which the token is renewed and the request sent again, once (n8n: 401). */
  tokenExpiredStatusCode: number;
}

/** Where the engine is given what it may not reach itself. */
export interface EngineDeps {
  now(): Date;
  /**
   * Decrypted credential data by id, for a node of `workflowId`; throws if unknown, or if the
   * workflow (whoever saved it) may not use it.
   */
  credential(id: string, workflowId: string): Promise<Record<string, string>>;
  /**
   * An OAuth2 credential's access token for a node of `workflowId`, checked as `credential` is;
   * `renew`: the API refused the current one, fetch another (refresh or client credentials).
   */
  oauth2Token?(id: string, workflowId: string, renew: boolean): Promise<OAuth2SigningToken>;
  /** Outbound HTTP, guarded against private addresses. */
  http(request: OutboundRequest): Promise<OutboundResponse>;
  /** Checks a host before a non-HTTP client (SMTP, IMAP) connects; absent, such nodes refuse to run. */
  outboundHost?: OutboundHostGuard;
  /**
   * The address a node's TCP client (Postgres, MySQL, Redis) may connect to for `host`, by the same
   * guard as HTTP; absent, such nodes refuse to connect.
   */
  connectAddress?(host: string, port: number): Promise<string>;
  /** Environment variables expressions may read as $env (already filtered by the allow-list). */
  env: Record<string, string>;
  expressionTimeoutMs: number;
  /** CPU time bound of one Code node run (all its items); default DEFAULT_CODE_TIMEOUT_MS. */
  codeTimeoutMs?: number;
  /** Variables (`$vars`), by name. */
  vars?: Record<string, string>;
  /** Whose expressions these are (the account): the sandbox serves tenants in turn, so one cannot starve the rest. */
  tenant?: string;
  /** Longest a `wait` node may pause; default DEFAULT_MAX_WAIT_MS. */
  maxWaitMs?: number;
  /** What Remove Duplicates v2 saw in earlier executions; absent, that operation fails its node. */
  dedupe?: DedupeHistory;
  /** Runs another workflow of the account for an Execute Workflow node (sub-workflow.ts). */
  subWorkflow?: (call: {
    workflowId: string;
    /**
     * n8n's `source: 'parameter'`: the callee given as workflow JSON in the node (text or object),
     * validated like a saved workflow and run as one of the caller's account; `workflowId` is unused.
     */
    workflowJson?: unknown;
    items: Item[];
    wait: boolean;
    parentExecutionId: string;
    /** The caller's node runs so far; a waited callee counts on from there. */
    nodeRunsBefore: number;
  }) => Promise<{ items: Item[]; nodeRuns: number }>;
  /** Most node runs one execution may take (all its stretches); default DEFAULT_MAX_NODE_RUNS. */
  maxNodeRuns?: number;
  /** Most bytes one AWS S3 download may bring in (S3_MAX_DOWNLOAD_BYTES); default DEFAULT_S3_MAX_DOWNLOAD_BYTES. */
  s3MaxDownloadBytes?: number;
  /** The nodes that reach this server's disk and processes, and other hosts' shells; absent: all off. */
  host?: HostAccess;
  /** The platform's knowledge base and built-in embedders, bound to the execution's account; absent: off. */
  platformAi?: PlatformAiAccess;
  /** Where large CPU work of a node runs (a worker, with a deadline and a heap bound); absent: inline. */
  cpu?: { pool: CpuPool; timeoutMs: number };
}

/** A passage of the knowledge base found for a query. */
export interface KnowledgeHit {
  text: string;
  score: number;
  documentId: string;
  title: string | null;
  topic: string;
  pageNumber: number | null;
  /** The document's own metadata (what was inserted with it). */
  metadata: Record<string, Json>;
}

/**
 * What AI nodes may use of the platform itself, always as the execution's account (the binding is made
 * where the engine's deps are built, never from a node's parameters): one topic of its knowledge base
 * through the knowledge service, and the built-in embedding models through the gateway.
 */
export interface PlatformAiAccess {
  /** The knowledge service's search (hybrid by default) over one topic of the account. */
  searchKnowledge(input: {
    topic: string;
    query: string;
    topK: number;
    mode: 'hybrid' | 'vector' | 'keyword';
    minScore?: number;
  }): Promise<KnowledgeHit[]>;
  /** Adds a text as a document of the topic (chunked, embedded, indexed) and waits until it is searchable. */
  addKnowledge(input: {
    topic: string;
    text: string;
    title?: string;
    metadata: Record<string, Json>;
  }): Promise<{ documentId: string; created: boolean; status: string }>;
  /** Vectors of `texts` from a built-in embedding model (`builtin/…`), recorded as the account's call. */
  embed(texts: string[], model: string): Promise<number[][]>;
}

/**
 * What the host-reaching nodes may do, from the instance's settings: each is off unless configured,
 * and a node that is off fails (at save and at run) naming the setting that turns it on.
 */
export interface HostAccess {
  /** Read/Write Files from Disk's root (WORKFLOW_FILES_DIR, the account's subfolder in a run); null: off. */
  filesDir: string | null;
  /** Execute Command (WORKFLOW_EXECUTE_COMMAND_ENABLED) and its bounds. */
  executeCommand: { enabled: boolean; timeoutMs: number; maxOutputBytes: number };
  /** The SSH node (WORKFLOW_SSH_ENABLED). */
  ssh: { enabled: boolean; timeoutMs: number; maxOutputBytes: number };
  /** Python in the Code node (WORKFLOW_PYTHON_ENABLED); absent: off. */
  python?: { enabled: boolean };
  /** Resolves and checks a TCP destination against the outbound-address guard; throws if refused. */
  tcpTarget(host: string, port: number): Promise<{ address: string; family: 4 | 6 }>;
}

/** Whose history: a workflow's (scope '') or one of its nodes' (scope = node id). */
export interface DedupeScope {
  workflowId: string;
  scope: string;
}

/** Keys and highest values seen across executions (n8n's processed data). */
export interface DedupeHistory {
  count(scope: DedupeScope): Promise<number>;
  /** Records the keys; returns those not seen before. */
  recordKeys(scope: DedupeScope, keys: string[]): Promise<Set<string>>;
  latest(scope: DedupeScope, kind: 'number' | 'date'): Promise<number | null>;
  /** Stores `value` if it is higher than the stored one. */
  raiseLatest(scope: DedupeScope, kind: 'number' | 'date', value: number): Promise<void>;
  clear(scope: DedupeScope): Promise<void>;
}

export const DEFAULT_CODE_TIMEOUT_MS = 5_000;

/** A guard against loops that never end (WORKFLOW_MAX_NODE_RUNS). */
export const DEFAULT_MAX_NODE_RUNS = 10_000;

/** 30 days, the default bound on a `wait` (WORKFLOW_MAX_WAIT_SECONDS). */
export const DEFAULT_MAX_WAIT_MS = 30 * 86_400_000;

/** What save-time checks of a node may depend on besides its parameters. */
export interface CheckLimits {
  maxWaitMs: number;
  now: Date;
  /** Which host-reaching nodes are on (absent: none). */
  host?: HostAccess;
}

// Outbound HTTP is core's; the engine uses its request and response shapes.
export type { OutboundRequest, OutboundResponse };

export interface RunContext {
  executionId: string;
  /**
   * `flow`, `agent` and `mcp`: a flow, an agent or an MCP client of the platform runs the workflow and waits for its answer;
   * `trigger`: a schedule; `error`: an error workflow; `integrated`: a sub-workflow (n8n's names).
   */
  mode:
    | 'webhook'
    | 'manual'
    | 'retry'
    | 'trigger'
    | 'flow'
    | 'agent'
    | 'mcp'
    | 'error'
    | 'integrated'
    | 'test';
  /** Public URL base for `$execution.resumeUrl`. */
  resumeUrlBase: string;
  /**
   * Wall-clock time (ms since the epoch) after which no further node starts: the run ends `canceled`
   * (the workflow's `settings.executionTimeout`); a node still running then is left behind.
   */
  deadline?: { at: number; seconds: number };
  /** A waited sub-workflow: the node runs its call tree had used, which its own count starts from. */
  nodeRunsBefore?: number;
  /**
   * Manual runs: a node named here is not run, its output is these items (n8n's pinned data). Other
   * modes never carry it, as n8n's production runs ignore pinned data.
   */
  pinData?: Record<string, Item[]>;
  /**
   * The signature of the resume URL of the execution's `waitIndex`-th pause: only a holder of the
   * full URL may resume it. Without it the URL carries none (engine tests).
   */
  resumeSignature?: (waitIndex: number) => string;
  /** Called when the first respondToWebhook runs, so the webhook can be answered before the run ends. */
  onRespond?: (response: WebhookResponse) => void | Promise<void>;
  /**
   * Called after each node run is recorded and its result routed (n8n's `nodeExecuteAfter`): a run
   * that failed or was cut off too, a pinned node's; not a disabled node (it does not run). Awaited,
   * so the run goes on after it.
   */
  onNodeFinished?: (event: NodeFinished) => void | Promise<void>;
  /**
   * Stores the run so far as a durable resume point, due at `resumeAt`, before a stretch that may be
   * cut off by a crash (a retry's wait, a waited sub-workflow call): recovery resumes from it instead
   * of recording the run crashed. `clearCheckpoint` drops it once that stretch is over.
   */
  checkpoint?: (state: RunState, resumeAt: Date) => Promise<void>;
  clearCheckpoint?: () => Promise<void>;
  /**
   * Aborted when the execution is stopped through the API: no further node starts, and a node still
   * running is left behind.
   */
  stopSignal?: AbortSignal;
  /**
   * The webhook answers as a stream (n8n's `responseMode: 'streaming'`): the chunks nodes send
   * (`NodeExecutionContext.sendChunk`) go here as they are made. Absent: nodes stream nothing.
   */
  onChunk?: (chunk: StreamChunk) => void;
}

/** n8n's StructuredChunk: one line of a streamed webhook answer (newline-delimited JSON). */
export interface StreamChunk {
  type: 'begin' | 'item' | 'end' | 'error';
  content?: string;
  metadata: { nodeId: string; nodeName: string; itemIndex: number; runIndex: number; timestamp: number };
}

export interface ValidationProblem {
  path: string;
  message: string;
}

export type WebhookHttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** A webhook node's parsed parameters, as the service registers and answers it. */
export interface WebhookNodeInfo {
  nodeName: string;
  nodeId: string;
  /**
   * Normalised: no leading or trailing slash. With path parameters, n8n's dynamic webhook:
   * `{webhookId}/users/:id`, the template a request's path is matched against.
   */
  path: string;
  /** The first segment of a path with parameters (the node's webhook id), else null. */
  dynamicPrefix: string | null;
  httpMethod: WebhookHttpMethod;
  /** `jwtAuth`: n8n's Webhook checking a bearer JWT against a jwtAuth credential. */
  authentication:
    | 'none'
    | 'basicAuth'
    | 'headerAuth'
    | 'bearerAuth'
    | 'queryAuth'
    | 'apiKey'
    | 'hmac'
    | 'jwtAuth';
  /** Credential id for the authentication (parameter `credential`, else node.credentials[authentication]). */
  credentialId: string | null;
  responseMode: 'onReceived' | 'lastNode' | 'responseNode';
  responseCode: number;
  responseData: 'firstEntryJson' | 'allEntries' | 'noData' | 'firstEntryBinary';
  options: {
    rawBody: boolean;
    bodyLimitBytes: number;
    /** An expression (`={{ … }}`) over the trigger item; evaluate with `evaluateDedupeKey`. */
    dedupeKey: string | null;
    hmacHeader: string;
    hmacTimestampHeader: string;
    hmacRequireTimestamp: boolean;
    /** n8n's `ipWhitelist`: the addresses and ranges that may call (null: any). */
    ipAllowList: string[] | null;
    /**
     * n8n's binary bodies: `always` (v1 `binaryData`), `unparsed` (v2: a body that is not JSON, a
     * form or text) or `never` (the platform's node). Multipart files are binary for n8n's node.
     */
    binaryBody: 'always' | 'unparsed' | 'never';
    /** The binary property for a body, or the prefix of uploaded files' properties; null: n8n's default. */
    binaryPropertyName: string | null;
    /** Where `rawBody` goes: `json.rawBody` (base64; the platform's node) or binary `data` (n8n's). */
    rawBodyAs: 'json' | 'binary';
  };
  /** `firstEntryBinary`: the binary property of the last node's first item that is the answer. */
  responseBinaryPropertyName: string;
  /** n8n's Form Trigger: the page served at `/form/{path}` (GET) and the fields a submission holds (POST). */
  form?: FormInfo;
  /** n8n's Chat Trigger (public): its messages (POST) and, in hosted mode, its chat page (GET). */
  chat?: ChatInfo;
  /** The answer is streamed as n8n's JSON lines (`responseMode: 'streaming'`), the last node's if none streams. */
  streaming?: boolean;
  /** n8n's Webhook `ignoreBots`: a bot's user agent gets 403 before authentication, as in n8n. */
  ignoreBots?: boolean;
  /**
   * n8n's Webhook CORS (`options.allowedOrigins`, default `*`): a call with an Origin gets the CORS
   * headers when its origin is allowed, and the path answers a browser's preflight (webhooks/cors.ts).
   * `null`: no origin is allowed (an IP allow-listed or authenticated webhook without the option).
   */
  cors?: { allowedOrigins: string | null; methods: WebhookHttpMethod[] };
  /**
   * n8n's Webhook response options: headers on its answers (`responseHeaders`), the body of an
   * `onReceived` answer (`responseData`), and for `lastNode` + `firstEntryJson` the content type and
   * the one property answered (`responseContentType`, `responsePropertyName`).
   */
  reply?: {
    headers: Record<string, string>;
    receivedBody: string | null;
    contentType: string | null;
    propertyName: string | null;
  };
  /** n8n's MCP Server Trigger: reached at `/mcp/{path}` (JSON-RPC messages), never at `/webhook/`. */
  mcp?: boolean;
  /**
   * A service's deliveries to a webhook it was told of at activation (n8n's Telegram Trigger): the
   * body is the trigger's item itself, the caller must send `secretHeader` holding the secret derived
   * from the node's credential (`credentialId`) else 403, and a delivery `accept` refuses starts no
   * execution (answered 200, as n8n's trigger answers one it filters out). `secretOf` gives `null`
   * when the credential holds nothing to derive a secret from (an empty token): every delivery is refused.
   */
  delivery?: {
    secretHeader: string;
    secretOf(credential: Record<string, string>): string | null;
    accept(body: unknown): boolean;
  };
}

/** What a public Chat Trigger serves besides its messages. */
export interface ChatInfo {
  /** This entry is the hosted chat page (GET), not the messages (POST). */
  page: boolean;
  title: string;
  subtitle: string;
  inputPlaceholder: string;
  /** The assistant's first messages, shown before the user writes (n8n's `initialMessages`, one a line). */
  initialMessages: string[];
  /** n8n's `allowedOrigins`: `*` or a comma-separated list of origins whose pages may call the chat. */
  allowedOrigins: string;
  /** n8n's `customCss`: the author's CSS after the page's own (in a nonce'd style, `<` escaped). */
  customCss?: string;
}

/** The field types of n8n's forms the platform serves (file uploads aside). */
export type FormFieldType =
  | 'text'
  | 'textarea'
  | 'number'
  | 'email'
  | 'password'
  | 'date'
  | 'dropdown'
  | 'checkbox'
  | 'radio'
  | 'hiddenField'
  | 'file';

/** One field of an n8n form: its label is the key of the submitted value in the trigger's item. */
export interface FormFieldInfo {
  label: string;
  type: FormFieldType;
  required: boolean;
  placeholder: string;
  /** Dropdown, checkbox and radio choices. */
  options: string[];
  /** A dropdown that takes several choices (submitted as a list). */
  multiselect: boolean;
  /** A hidden field's name (its key) and value. */
  name: string;
  value: string;
  /** The key of the submitted value in the item: the label, a hidden field's name, n8n 2.4+'s `fieldName`. */
  key: string;
  /** n8n's `defaultValue`: the value the page shows first (checkboxes: comma-separated options). */
  defaultValue: string;
  /** A file field: whether it takes several files, and n8n's `acceptFileTypes` (`.jpg, .png`; empty: any). */
  multipleFiles: boolean;
  accept: string;
  /** Checkboxes: n8n's `limitSelection` as bounds on how many are ticked (null: unlimited). */
  minSelections: number | null;
  maxSelections: number | null;
}

/** An n8n form page: title, description, fields and what a submission is answered with. */
export interface FormInfo {
  title: string;
  description: string;
  buttonLabel: string;
  fields: FormFieldInfo[];
  /** The text of the page shown after a submission (n8n's `formSubmittedText`). */
  submittedText: string;
  /** n8n's `showHeaders`: the submission's request headers go into the item as `headers`. */
  showHeaders?: boolean;
  /** n8n's `useWorkflowTimezone`: `submittedAt` in the workflow's time zone (else UTC). */
  useWorkflowTimezone?: boolean;
  /**
   * The zone `submittedAt` is written in when `useWorkflowTimezone` holds, fixed when the page was made
   * (an n8n Form page: the workflow's zone as the execution had it); absent: the workflow's settings.
   */
  timezone?: string;
  /** n8n's `customCss`: the author's CSS after the page's own (in a nonce'd style, `<` escaped). */
  customCss?: string;
  /** n8n's `appendAttribution` (default true): the page's attribution line under the form. */
  appendAttribution?: boolean;
  /** n8n's `ignoreBots`: a bot's user agent gets 401 on the page and the submission, as in n8n. */
  ignoreBots?: boolean;
  /** Form Trigger v1: n8n 1.x served the page and its submissions at `/webhook/{path}/n8n-form`. */
  servedAtWebhook?: boolean;
}
