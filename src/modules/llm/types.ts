/**
 * The gateway's neutral language: what every provider speaks to the service and what the Ollama and
 * OpenAI surfaces translate from. Nothing here knows a wire format.
 */

export type ModelKind = 'chat' | 'embedding' | 'moderation';
/** A provider's name in the catalogue (`providers/catalogue.ts`): `ollama`, `openai`, `builtin`, … */
export type ProviderKind = string;

/** Prices in US dollars per million tokens (for usage reports; never billed here). */
interface ModelPricing {
  inputPerMillion: number;
  outputPerMillion: number;
}

/** One model of the registry, as the operator configured it. */
export interface ModelEntry {
  /** The name clients ask for (`llama3.1`, `gpt-4o-mini`, `builtin/hashed-ngrams`). */
  name: string;
  provider: ProviderKind;
  /** The provider's own name for it (Ollama tag, OpenAI model id, built-in id). */
  upstreamModel: string;
  kind: ModelKind;
  contextWindow: number;
  pricing?: ModelPricing;
  /** Models tried in order when this one fails before its first byte. */
  fallbacks: string[];
  /** Time to the first byte, and the longest silence between two chunks of a stream. */
  timeoutMs: number;
  /** Provider base URL (ollama: `http://host:11434`; openai: `https://api.openai.com/v1`). */
  baseUrl?: string;
  /** Provider API key, resolved at boot from an env variable or an encrypted credential; never logged. */
  apiKey?: string;
  /** Embedding dimensions, when known (built-in models always know). */
  dimensions?: number;
  /** The API version a provider that has one is called with (anthropic: `anthropic-version`). */
  version?: string;
  /** Which OpenAI-compatible server an `openai` entry is (`openai`, `vllm`, `llama.cpp`): what extras it takes. */
  compat?: string;
  /** What the model reads besides text, as the operator declared it (`image`, `file`); unset: text only. */
  inputs?: Array<'text' | 'image' | 'file'>;
}

export interface ToolCall {
  /** OpenAI's call id; Ollama has none, so one is made up when translating. */
  id?: string;
  name: string;
  /** Parsed arguments (Ollama sends an object, OpenAI a JSON string: both become this). */
  arguments: Record<string, unknown>;
}

export interface ToolSpec {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    /** The arguments must follow `parameters` exactly (OpenAI's and Anthropic's `strict`). */
    strict?: boolean | null;
  };
}

/** A document in a message: base64 bytes and their media type (`application/pdf`, `text/plain`). */
export interface FileInput {
  mediaType: string;
  data: string;
  filename?: string;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** OpenAI's participant `name` (not a tool's: that is `toolName`). */
  name?: string;
  /** Base64 images (Ollama `images`; OpenAI `image_url` data URLs). */
  images?: string[];
  /**
   * OpenAI's `image_url.detail` of the images that set one: the image's index in `images`, and the
   * content part it came from (a provider without detail levels names that part in its 400).
   */
  imageDetails?: Array<{ image: number; part: number; detail: string }>;
  /** Documents the model reads whole (OpenAI `file` parts, Anthropic `document` blocks). */
  files?: FileInput[];
  toolCalls?: ToolCall[];
  /** For role `tool`: the call this answers (OpenAI `tool_call_id`) and the tool's name (Ollama `tool_name`). */
  toolCallId?: string;
  toolName?: string;
  /** For role `tool`: the tool failed (Anthropic's `is_error`). */
  isError?: boolean;
  thinking?: string;
}

/** Sampling options both surfaces know; Ollama-only options pass through in `extra`. */
export interface ChatOptions {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /**
   * Other Ollama `options` (num_ctx, repeat_penalty, …): passed to an Ollama upstream as they are, to an
   * OpenAI-compatible one under the names it takes, refused by name where nothing takes them.
   */
  extra?: Record<string, unknown>;
}

/** Whether and which tool the model must call (OpenAI's `tool_choice`). */
type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/**
 * OpenAI request fields the other dialects have no word for. A provider that honours them sends
 * them on; one that cannot says so in `unsupported` and the caller gets a 400 naming the field.
 */
export interface OpenAiExtras {
  user?: string;
  metadata?: Record<string, string>;
  store?: boolean;
  serviceTier?: string;
  reasoningEffort?: string;
  parallelToolCalls?: boolean;
  /** The client wrote `max_completion_tokens` (reasoning models refuse `max_tokens`). */
  maxCompletionTokens?: boolean;
  /** `response_format.json_schema`'s name and strictness. */
  schemaName?: string;
  schemaStrict?: boolean | null;
}

/** Anthropic request fields the other dialects have no word for. */
export interface AnthropicExtras {
  /** `thinking.budget_tokens`: how many tokens the model may think with (`think` is true). */
  thinkingBudget?: number;
}

/** A request field a provider cannot honour: the gateway answers 400 naming it, nothing is dropped. */
export interface Unsupported {
  /** The body field as the client wrote it (`body.tool_choice`). */
  field: string;
  reason: string;
}

export interface ChatRequest {
  /** The provider's model name (the registry entry's `upstreamModel`). */
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** Fields of the OpenAI dialect (see OpenAiExtras). */
  openAi?: OpenAiExtras;
  /** Fields of the Anthropic dialect (see AnthropicExtras). */
  anthropic?: AnthropicExtras;
  /** `json` for any JSON object, or a JSON schema the answer must follow. */
  format?: 'json' | Record<string, unknown>;
  options: ChatOptions;
  /** Ollama's keep_alive, passed through to an Ollama upstream. */
  keepAlive?: string | number;
  think?: boolean;
  /** The calling account: the built-in extractive model retrieves from its knowledge base. */
  accountId?: string;
  /**
   * What a caller that retrieved for itself (a rag flow, an agent) already put in the prompt: the
   * question apart from its template, and the passages. A model that cannot read a prompt
   * (builtin/extractive) quotes from these instead of searching the whole knowledge base.
   */
  grounding?: { question: string; passages: Passage[] };
  /** A prompt completion (Ollama `/api/generate`, OpenAI `/v1/completions`), not a chat: see GenerateInput. */
  generate?: GenerateInput;
  /** Log probabilities of the answer's tokens, with this many alternatives each (0: the chosen only). */
  logprobs?: { top: number };
  /** Answers to generate (OpenAI `n`); absent means one. */
  n?: number;
}

/**
 * The fields of a completion that a chat has no word for. `messages` still holds the one-turn chat
 * (system, prompt) so a provider without completions can answer when none of these is set.
 */
export interface GenerateInput {
  prompt: string;
  /** Fill-in-the-middle: the text after the completion. */
  suffix?: string;
  system?: string;
  /** The prompt goes to the model as it is, no template applied. */
  raw?: boolean;
  /** A prompt template replacing the model's (Ollama). */
  template?: string;
  /** Ollama's token context of a previous generate, continuing it. */
  context?: number[];
  /** The dialect the client spoke (a provider maps fields only it has, `body.suffix` vs …). */
  dialect: 'ollama' | 'openai';
}

/** One token's log probability, with its most likely alternatives. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top?: Array<{ token: string; logprob: number; bytes?: number[] | null }>;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** True when the upstream sent no counts and these were estimated from the text. */
  estimated: boolean;
}

/** Durations the upstream reported, in nanoseconds (Ollama's fields); absent ones are measured here. */
export interface UpstreamTimings {
  totalNs?: number;
  loadNs?: number;
  promptEvalNs?: number;
  evalNs?: number;
}

export type ChatEvent =
  | {
      type: 'delta';
      content?: string;
      thinking?: string;
      toolCalls?: ToolCall[];
      logprobs?: TokenLogprob[];
      /** Which answer of `n` this delta extends (absent: the first). */
      choice?: number;
    }
  | {
      type: 'done';
      /** Ollama's token context after a generate, for the next one to continue. */
      context?: number[];
      /** Why each answer of `n` > 1 stopped, by index (`doneReason` is the first's). */
      choiceReasons?: string[];
      /** `stop`, `length`, `tool_calls` (Ollama says `stop` for tool calls too; OpenAI's finish_reason). */
      doneReason: string;
      usage: TokenUsage | null;
      timings?: UpstreamTimings;
    };

/**
 * A failure talking to an upstream. `retryable` failures (connection refused, timeout, 429, 5xx) that
 * happen before the first byte reach the client only when no fallback is left.
 */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The upstream's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface EmbedRequest {
  model: string;
  input: string[];
  /** Ollama's `truncate` (default true): cut inputs to the context window instead of failing. */
  truncate?: boolean;
  /** OpenAI's `dimensions`, when the model supports it. */
  dimensions?: number;
  /** OpenAI's token-array inputs (then `input` is empty): only a provider that reads token ids takes them. */
  tokens?: number[][];
  /** OpenAI's end-user id. */
  user?: string;
  /** Ollama's `options` as sent (an embedding reads `num_ctx` and the runtime settings, no sampling). */
  options?: Record<string, unknown>;
  /** Ollama's keep_alive. */
  keepAlive?: string | number;
}

/** The upstream's moderation results, passed on as they are (their categories are the provider's). */
export interface ModerationResult {
  results: unknown[];
}

export interface EmbedResult {
  embeddings: number[][];
  promptTokens: number | null;
}

/**
 * What a provider does for the gateway. `chat` resolves once the upstream accepted the request
 * (HTTP headers received) and rejects with `UpstreamError` otherwise; the events follow. Aborting
 * `signal` must abort the upstream request (the client went away).
 */
/**
 * A chat in the provider's own dialect, forwarded as the client sent it (the client's dialect is the
 * provider's: docs/decisions.md, "Same-dialect relay"): the validated body bytes, the model name
 * already rewritten to the upstream's.
 */
export interface RelayRequest {
  /** The dialect the body is in; a provider relays only its own. */
  dialect: 'openai' | 'ollama';
  body: string | Buffer;
  stream: boolean;
  /** The client asked for the usage frame (OpenAI's `stream_options.include_usage`). */
  includeUsage: boolean;
  /** The body is `/api/generate`'s (Ollama), not a chat's. */
  generate?: boolean;
}

/** How a relayed answer ended: what accounting needs. */
export interface RelayOutcome {
  usage: TokenUsage | null;
  /** The texts of the answer, for estimating its tokens when the upstream sent no counts. */
  completionText: () => string;
}

/** A relayed answer: the upstream's bytes whole, or its stream frames as they come (one string per read). */
export type RelayAnswer =
  | { stream: false; contentType: string; body: Buffer; outcome: RelayOutcome }
  | { stream: true; contentType: string; frames: AsyncGenerator<string, RelayOutcome, undefined> };

/**
 * What ends an upstream call without an AbortSignal: a relay attempt's, followed by a plain callback.
 * An AbortSignal's EventTarget listener (and its controller) is per-call work a relay can skip.
 */
export interface CallAbort {
  readonly aborted: boolean;
  /** Calls `onAbort` when the call is aborted (at once if it was); returns the way to stop following. */
  follow(onAbort: () => void): () => void;
}

/** An AbortSignal, or a follower that calls back. */
export type Abortable = AbortSignal | CallAbort;

export interface ChatProvider {
  /** The first field of `request` this provider would drop for this model, if any (checked before it is called). */
  unsupported?(request: ChatRequest, entry: ModelEntry): Unsupported | null;
  chat(request: ChatRequest, entry: ModelEntry, signal: AbortSignal): Promise<AsyncIterable<ChatEvent>>;
  /** The dialects this provider relays as they are (same-dialect calls skip the neutral form). */
  readonly relays?: ReadonlySet<RelayRequest['dialect']>;
  /** Forwards a same-dialect chat; resolves once a 2xx answer began (else rejects as `chat` does). */
  relay?(request: RelayRequest, entry: ModelEntry, signal: Abortable): Promise<RelayAnswer>;
  embed(request: EmbedRequest, entry: ModelEntry, signal: AbortSignal): Promise<EmbedResult>;
  /** Classifies texts (OpenAI's `/moderations`); a provider without it is refused with a 400. */
  moderate?(input: unknown, entry: ModelEntry, signal: AbortSignal): Promise<ModerationResult>;
  /** The first field of an embedding request this provider would drop (token inputs, dimensions), if any. */
  embedUnsupported?(request: EmbedRequest, entry: ModelEntry): Unsupported | null;
  /** Frees connections and workers at shutdown. */
  close?(): void | Promise<void>;
}

/** What the module gives a provider when it creates it. */
interface ProviderDeps {
  /** The knowledge base's retriever, once it registered one (the built-in extractive model asks). */
  retriever: () => Retriever | null;
  log: { warn(obj: unknown, msg: string): void };
  /** Where large inputs are worked on off the event loop. */
  cpu?: { pool: import('../../core/cpu/index.js').CpuPool; timeoutMs: number };
}

/** Where a model entry's defaults come from (the server's settings). */
export interface ProviderDefaults {
  ollamaUrl: string;
  openAiBaseUrl: string;
  openAiApiKey: string;
}

/**
 * One provider of the catalogue: its name, the settings of a model entry it takes besides the
 * common ones, and how it is made. A new provider is one file exporting this and one line in
 * `providers/catalogue.ts`.
 */
export interface ProviderDefinition {
  kind: ProviderKind;
  /**
   * The provider-specific fields a model entry may carry (`baseUrl`, `apiKeyEnv`,
   * `apiKeyCredential`); an entry that sets a field its provider does not take is refused at boot.
   */
  configSchema: import('typebox').TObject;
  /** Its dialect carries documents (PDF): a model entry may list the `file` input. */
  readsFiles?: boolean;
  /** The base URL and key an entry that names none gets (none: the provider needs neither). */
  defaults?(
    entry: { baseUrl?: string; apiKeyCredential?: string },
    settings: ProviderDefaults,
  ): {
    baseUrl?: string;
    apiKey?: string;
  };
  /** Made once per server; loads its implementation only then. */
  create(deps: ProviderDeps): Promise<ChatProvider>;
}

/** A passage an extractive answer can quote. */
export interface Passage {
  text: string;
  /** Where it came from: `message 2`, a document title, a URL. */
  source: string;
  score: number;
}

/**
 * Finds passages for a question. The built-in extractive model uses the messages themselves until
 * the knowledge base registers a retriever over its documents.
 */
export interface Retriever {
  retrieve(
    query: string,
    options: { accountId: string; limit: number; signal: AbortSignal },
  ): Promise<Passage[]>;
}
