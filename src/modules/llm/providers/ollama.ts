/**
 * Talks to an Ollama server (`/api/chat` NDJSON, `/api/embed`). The gateway always streams from it;
 * the service buffers for clients that asked for one object.
 */
import { Type } from 'typebox';
import {
  type Abortable,
  type ChatEvent,
  type ChatMessage,
  type ChatProvider,
  type ChatRequest,
  type EmbedRequest,
  type EmbedResult,
  type ModelEntry,
  type ProviderDefinition,
  type RelayAnswer,
  type RelayRequest,
  type TokenLogprob,
  type ToolCall,
  type Unsupported,
  UpstreamError,
  type UpstreamTimings,
} from '../types.js';
import { documentText, firstBinaryDocument } from './documents.js';
import { JsonUpstream, parseJson, type UpstreamCall, upstreamErrorText } from './http-stream.js';
import { openAiOnlyMessageField } from './message-fields.js';
import { modelRenamer, ollamaUsage, relayLines, relayWhole } from './ollama-relay.js';
import { RemoteProviderSettings, trimSlash } from './settings.js';
import { reasoningLevel } from './thinking.js';
import { toolResultText } from './tool-result.js';

const LABEL = 'Ollama';
const DEFAULT_OLLAMA_URL = 'http://127.0.0.1:11434';
const KIND = {
  label: LABEL,
  defaultBaseUrl: DEFAULT_OLLAMA_URL,
  errorMessage: (body: unknown) => ollamaErrorMessage(body),
};

interface OllamaToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

/** One NDJSON line of `/api/chat` (the fields the gateway reads). */
interface OllamaChatChunk {
  error?: unknown;
  message?: { content?: string; thinking?: string; tool_calls?: OllamaToolCall[] };
  /** `/api/generate`'s text and reasoning (a chat's are in `message`). */
  response?: string;
  thinking?: string;
  logprobs?: unknown;
  context?: unknown;
  done?: boolean;
  done_reason?: string;
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
}

/** An Ollama server: `baseUrl` defaults to OLLAMA_URL. */
export const ollamaProviderDefinition: ProviderDefinition = {
  kind: 'ollama',
  configSchema: Type.Object(RemoteProviderSettings),
  defaults: (entry, settings) => ({ baseUrl: trimSlash(entry.baseUrl ?? settings.ollamaUrl) }),
  create: async () => new OllamaProvider(),
};

export class OllamaProvider extends JsonUpstream implements ChatProvider {
  readonly relays: ReadonlySet<RelayRequest['dialect']> = new Set(['ollama']);

  constructor() {
    super(KIND);
  }

  /** An Ollama client's chat or generate as it sent it: the answer's lines go back as they came, renamed. */
  async relay(request: RelayRequest, entry: ModelEntry, signal: Abortable): Promise<RelayAnswer> {
    const path = request.generate ? '/api/generate' : '/api/chat';
    const accept = request.stream ? 'application/x-ndjson' : 'application/json';
    const call = await this.postRaw(entry, path, request.body, signal, accept);
    const rename = modelRenamer(entry.upstreamModel, entry.name);
    if (!request.stream) return relayWhole(call, rename);
    return { stream: true, contentType: 'application/x-ndjson', frames: relayLines(call, rename) };
  }

  unsupported(request: ChatRequest): Unsupported | null {
    return ollamaUnsupported(request);
  }

  async chat(
    request: ChatRequest,
    entry: ModelEntry,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ChatEvent>> {
    // A completion is a real `/api/generate` (fill-in-the-middle, raw, template, context work), not a chat.
    const [path, body] = request.generate
      ? ['/api/generate', ollamaGenerateBody(request)]
      : ['/api/chat', ollamaChatBody(request)];
    const call = await this.post(entry, path, body, signal, 'application/x-ndjson');
    return readChatStream(call);
  }

  /**
   * Pulls `name` onto the Ollama server of `entry`, yielding its progress objects as they come; an
   * `error` line (an unknown model) is thrown as a 400.
   */
  async pull(
    entry: ModelEntry,
    name: string,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<Record<string, unknown>>> {
    const call = await this.post(
      entry,
      '/api/pull',
      { model: name, stream: true },
      signal,
      'application/x-ndjson',
    );
    return (async function* () {
      for await (const line of call.lines()) {
        if (line.trim() === '') continue;
        const progress = parseJson(line, LABEL);
        if (progress === null || typeof progress !== 'object')
          throw new UpstreamError(`${LABEL} upstream sent a pull line that is not an object`, true);
        const p = progress as Record<string, unknown>;
        if (p.error !== undefined)
          throw new UpstreamError(`${LABEL} upstream: ${upstreamErrorText(p.error)}`, false, 400);
        yield p;
      }
    })();
  }

  embedUnsupported(request: EmbedRequest): Unsupported | null {
    if (request.tokens)
      return { field: 'body.input', reason: 'token arrays are not accepted by an Ollama model; send text' };
    if (request.user !== undefined)
      return { field: 'body.user', reason: 'an Ollama server takes no end-user id' };
    return null;
  }

  async embed(request: EmbedRequest, entry: ModelEntry, signal: AbortSignal): Promise<EmbedResult> {
    const body: Record<string, unknown> = {
      model: request.model,
      input: request.input,
      truncate: request.truncate ?? true,
    };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    if (request.options !== undefined) body.options = request.options;
    if (request.keepAlive !== undefined) body.keep_alive = request.keepAlive;
    const call = await this.post(entry, '/api/embed', body, signal, 'application/json');
    const parsed = parseJson(await call.text(), LABEL) as {
      embeddings?: unknown;
      prompt_eval_count?: unknown;
    };
    const embeddings = parsed.embeddings;
    if (!isMatrix(embeddings) || embeddings.length !== request.input.length) {
      throw new UpstreamError(
        `${LABEL} upstream sent no embeddings for the ${request.input.length} inputs`,
        true,
      );
    }
    const count = parsed.prompt_eval_count;
    return { embeddings, promptTokens: typeof count === 'number' ? count : null };
  }
}

/** The `/api/chat` body for a neutral request (always streamed). */
/**
 * OpenAI fields an Ollama server has no word for. `reasoning_effort` becomes `think`'s level,
 * `max_completion_tokens` is `num_predict`, `tool_choice` `none` sends no tools; the rest are refused.
 */
function ollamaUnsupported(request: ChatRequest): Unsupported | null {
  // Ollama's chat carries text and images: a PDF would be dropped, so it is refused by name.
  const document = firstBinaryDocument(request.messages);
  if (document)
    return {
      field: `body.messages.${document.index}.content`,
      reason: `holds a file of type ${document.file.mediaType}, but an Ollama model takes text and images only`,
    };
  if (request.n !== undefined && request.n > 1)
    return { field: 'body.n', reason: 'an Ollama model gives one answer per request' };
  const message = openAiOnlyMessageField(request.messages, 'an Ollama model');
  if (message) return message;
  const x = request.openAi;
  const choice = request.toolChoice;
  if (choice !== undefined && choice !== 'auto' && choice !== 'none')
    return { field: 'body.tool_choice', reason: 'an Ollama model cannot be made to call a tool' };
  const strict = request.tools?.findIndex((t) => t.function.strict === true) ?? -1;
  if (strict !== -1)
    return {
      field: `body.tools.${strict}.strict`,
      reason: "an Ollama model's tool arguments cannot be held to the schema",
    };
  if (!x) return null;
  if (x.parallelToolCalls === false)
    return { field: 'body.parallel_tool_calls', reason: 'an Ollama model may call several tools at once' };
  if (x.user !== undefined) return { field: 'body.user', reason: 'an Ollama server takes no end-user id' };
  if (x.metadata !== undefined)
    return { field: 'body.metadata', reason: 'an Ollama server keeps no metadata' };
  if (x.store !== undefined) return { field: 'body.store', reason: 'an Ollama server stores no completions' };
  if (x.serviceTier !== undefined)
    return { field: 'body.service_tier', reason: 'an Ollama server has no service tiers' };
  if (x.reasoningEffort === 'minimal')
    return { field: 'body.reasoning_effort', reason: "an Ollama model thinks at 'low', 'medium' or 'high'" };
  return null;
}

function ollamaChatBody(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map(ollamaMessage),
    stream: true,
  };
  if (request.tools?.length && request.toolChoice !== 'none') body.tools = request.tools;
  return withCommon(body, request);
}

/** The `/api/generate` body: the prompt and every completion field as the client sent it. */
function ollamaGenerateBody(request: ChatRequest): Record<string, unknown> {
  const g = request.generate;
  const body: Record<string, unknown> = { model: request.model, prompt: g?.prompt ?? '', stream: true };
  if (g?.suffix !== undefined) body.suffix = g.suffix;
  if (g?.system !== undefined) body.system = g.system;
  if (g?.raw !== undefined) body.raw = g.raw;
  if (g?.template !== undefined) body.template = g.template;
  if (g?.context !== undefined) body.context = g.context;
  const images = request.messages.flatMap((m) => m.images ?? []);
  if (images.length) body.images = images;
  return withCommon(body, request);
}

/** What chat and generate bodies share: format, keep-alive, thinking, log probabilities, options. */
function withCommon(body: Record<string, unknown>, request: ChatRequest): Record<string, unknown> {
  if (request.logprobs) {
    body.logprobs = true;
    if (request.logprobs.top > 0) body.top_logprobs = request.logprobs.top;
  }
  // A level (Ollama's own, reasoning_effort, or a budget's closest) says more than `think: true`.
  const effort = reasoningLevel(request);
  if (effort !== undefined && request.think !== false) body.think = effort;
  else if (request.think !== undefined) body.think = request.think;
  if (request.format !== undefined) body.format = request.format;
  if (request.keepAlive !== undefined) body.keep_alive = request.keepAlive;
  const o = request.options;
  // Named options win over the pass-through ones.
  const options: Record<string, unknown> = { ...o.extra };
  if (o.temperature !== undefined) options.temperature = o.temperature;
  if (o.topP !== undefined) options.top_p = o.topP;
  if (o.topK !== undefined) options.top_k = o.topK;
  if (o.maxTokens !== undefined) options.num_predict = o.maxTokens;
  if (o.stop !== undefined) options.stop = o.stop;
  if (o.seed !== undefined) options.seed = o.seed;
  if (o.presencePenalty !== undefined) options.presence_penalty = o.presencePenalty;
  if (o.frequencyPenalty !== undefined) options.frequency_penalty = o.frequencyPenalty;
  for (const _ in options) {
    body.options = options;
    break;
  }
  return body;
}

function ollamaMessage(message: ChatMessage): Record<string, unknown> {
  let content = message.role === 'tool' ? toolResultText(message) : message.content;
  // Text documents read as text (a binary one was refused by `unsupported`).
  for (const file of message.files ?? [])
    content = content === '' ? documentText(file) : `${content}\n\n${documentText(file)}`;
  const out: Record<string, unknown> = { role: message.role, content };
  if (message.images?.length) out.images = message.images;
  if (message.thinking) out.thinking = message.thinking;
  if (message.toolCalls?.length) {
    out.tool_calls = message.toolCalls.map((call) => ({
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  if (message.toolName !== undefined) out.tool_name = message.toolName;
  return out;
}

/** The events of one `/api/chat` stream; throws `UpstreamError` on anything but a clean `done`. */
async function* readChatStream(call: UpstreamCall): AsyncGenerator<ChatEvent, void, undefined> {
  let sawToolCalls = false;
  for await (const line of call.lines()) {
    if (line.length === 0 || line === '\r') continue;
    const chunk = parseJson(line, LABEL) as OllamaChatChunk;
    if (chunk === null || typeof chunk !== 'object') {
      throw new UpstreamError(`${LABEL} upstream sent a line that is not an object`, true);
    }
    if (chunk.error !== undefined) {
      throw new UpstreamError(
        `${LABEL} upstream failed: ${call.scrub(upstreamErrorText(chunk.error))}`,
        true,
      );
    }
    // A chat's text is in `message`, a generate's at the top of the chunk.
    const message = chunk.message ?? { content: chunk.response, thinking: chunk.thinking };
    const logprobs = logprobsOf(chunk.logprobs);
    const toolCalls = message.tool_calls?.length ? message.tool_calls.map(neutralToolCall) : undefined;
    if (toolCalls) sawToolCalls = true;
    if (message.content || message.thinking || toolCalls || logprobs) {
      const delta: ChatEvent = { type: 'delta' };
      if (message.content) delta.content = message.content;
      if (message.thinking) delta.thinking = message.thinking;
      if (toolCalls) delta.toolCalls = toolCalls;
      if (logprobs) delta.logprobs = logprobs;
      yield delta;
    }
    if (chunk.done === true) {
      call.release();
      const reason = chunk.done_reason ?? 'stop';
      // Ollama says `stop` after tool calls; the neutral reason says why the model stopped.
      const done: ChatEvent = {
        type: 'done',
        doneReason: sawToolCalls && reason === 'stop' ? 'tool_calls' : reason,
        usage: ollamaUsage(chunk),
        timings: ollamaTimings(chunk),
      };
      if (isTokenArray(chunk.context)) done.context = chunk.context;
      yield done;
      return;
    }
  }
  throw new UpstreamError(`${LABEL} upstream ended the stream without its final chunk`, true);
}

function neutralToolCall(call: OllamaToolCall): ToolCall {
  const name = call.function?.name;
  const args = call.function?.arguments;
  if (typeof name !== 'string')
    throw new UpstreamError(`${LABEL} upstream sent a tool call without a name`, true);
  let parsed: unknown = args ?? {};
  // Some Ollama-compatible servers send the arguments as a JSON string.
  if (typeof parsed === 'string') parsed = parseJson(parsed, LABEL);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UpstreamError(`${LABEL} upstream sent tool call arguments that are not an object`, true);
  }
  const out: ToolCall = { name, arguments: parsed as Record<string, unknown> };
  if (typeof call.id === 'string') out.id = call.id;
  return out;
}

function ollamaTimings(chunk: OllamaChatChunk): UpstreamTimings {
  const timings: UpstreamTimings = {};
  if (typeof chunk.total_duration === 'number') timings.totalNs = chunk.total_duration;
  if (typeof chunk.load_duration === 'number') timings.loadNs = chunk.load_duration;
  if (typeof chunk.prompt_eval_duration === 'number') timings.promptEvalNs = chunk.prompt_eval_duration;
  if (typeof chunk.eval_duration === 'number') timings.evalNs = chunk.eval_duration;
  return timings;
}

function ollamaErrorMessage(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'error' in body) return upstreamErrorText(body.error);
  return undefined;
}

function isMatrix(value: unknown): value is number[][] {
  return Array.isArray(value) && value.every((row) => Array.isArray(row));
}

const isTokenArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((x) => Number.isInteger(x));

/** Ollama's `logprobs` entries (`{token, logprob, bytes, top_logprobs}`) in the neutral form. */
function logprobsOf(value: unknown): TokenLogprob[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const out: TokenLogprob[] = [];
  for (const item of value) {
    const entry = item as { token?: unknown; logprob?: unknown; bytes?: unknown; top_logprobs?: unknown };
    if (typeof entry?.token !== 'string' || typeof entry.logprob !== 'number')
      throw new UpstreamError(`${LABEL} upstream sent a malformed logprobs entry`, true);
    const token: TokenLogprob = { token: entry.token, logprob: entry.logprob };
    if (Array.isArray(entry.bytes)) token.bytes = entry.bytes as number[];
    if (Array.isArray(entry.top_logprobs))
      token.top = (entry.top_logprobs as Array<{ token?: unknown; logprob?: unknown }>)
        .filter((t) => typeof t?.token === 'string' && typeof t.logprob === 'number')
        .map((t) => ({ token: t.token as string, logprob: t.logprob as number }));
    out.push(token);
  }
  return out;
}
