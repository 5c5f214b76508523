/**
 * Talks to OpenAI and OpenAI-compatible servers (`/chat/completions` over SSE, `/embeddings`). The
 * gateway always streams from it, with `stream_options.include_usage` so token counts come back.
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
  type FileInput,
  type ModelEntry,
  type ModerationResult,
  type ProviderDefinition,
  type RelayAnswer,
  type RelayOutcome,
  type RelayRequest,
  type TokenLogprob,
  type TokenUsage,
  type ToolCall,
  type Unsupported,
  UpstreamError,
} from '../types.js';
import { documentText, isTextDocument } from './documents.js';
import {
  JsonUpstream,
  LineSplitter,
  MAX_LINE_BYTES,
  parseJson,
  SseParser,
  type UpstreamCall,
  upstreamErrorText,
} from './http-stream.js';
import {
  embedOptionRefusal,
  extraOptionFields,
  OPENAI_COMPATS,
  type OpenAiCompat,
  thinkFields,
} from './openai-compat.js';
import { RemoteProviderSettings, trimSlash } from './settings.js';
import { reasoningLevel } from './thinking.js';
import { toolResultText } from './tool-result.js';

const LABEL = 'OpenAI';
const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1';
const KIND = {
  label: LABEL,
  defaultBaseUrl: DEFAULT_OPENAI_URL,
  errorMessage: (body: unknown) => openAiErrorMessage(body),
};

interface ToolCallFragment {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** One `chat.completion.chunk` (the fields the gateway reads). */
interface OpenAiChunk {
  error?: unknown;
  choices?: Array<{
    index?: number;
    /** A `/completions` chunk's text (a chat's is in `delta`). */
    text?: string;
    logprobs?: unknown;
    delta?: {
      content?: string | null;
      /** Reasoning text, as OpenAI-compatible servers (vLLM, DeepSeek, Ollama's own) name it. */
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ToolCallFragment[];
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** A `chat.completion` (the fields a relay reads). */
interface OpenAiCompletion {
  error?: unknown;
  choices?: Array<{ message?: { content?: string | null; tool_calls?: unknown } } | null>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** A tool call being assembled from its fragments. */
interface PendingToolCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

/**
 * OpenAI or an OpenAI-compatible server: `baseUrl` defaults to OPENAI_BASE_URL, and OPENAI_API_KEY
 * goes only there (a local vLLM must not receive the OpenAI key).
 */
export const openAiProviderDefinition: ProviderDefinition = {
  kind: 'openai',
  readsFiles: true,
  configSchema: Type.Object({
    ...RemoteProviderSettings,
    /** Which server this is, for the Ollama options it takes beyond OpenAI's API (openai-compat.ts). */
    compat: Type.Optional(Type.Enum(OPENAI_COMPATS)),
  }),
  defaults(entry, settings) {
    const baseUrl = trimSlash(entry.baseUrl ?? settings.openAiBaseUrl);
    const ownKey =
      !entry.apiKeyCredential && settings.openAiApiKey && baseUrl === trimSlash(settings.openAiBaseUrl);
    return ownKey ? { baseUrl, apiKey: settings.openAiApiKey } : { baseUrl };
  },
  create: async () => new OpenAiProvider(),
};

export class OpenAiProvider extends JsonUpstream implements ChatProvider {
  readonly relays: ReadonlySet<RelayRequest['dialect']> = new Set(['openai']);

  constructor() {
    super(KIND);
  }

  /**
   * An OpenAI client's chat as it sent it: the answer's bytes go back as they came, read only for
   * the usage (and, streamed, for the frames that end or break the answer).
   */
  async relay(request: RelayRequest, entry: ModelEntry, signal: Abortable): Promise<RelayAnswer> {
    const call = await this.postRaw(
      entry,
      '/chat/completions',
      request.body,
      signal,
      request.stream ? 'text/event-stream' : 'application/json',
    );
    if (request.stream)
      return {
        stream: true,
        contentType: 'text/event-stream; charset=utf-8',
        frames: relayFrames(call, request.includeUsage),
      };
    const body = await call.bytes();
    const answer = parseJson(body.toString('utf8'), LABEL) as OpenAiCompletion | null;
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
      throw new UpstreamError(`${LABEL} upstream sent an answer that is not an object`, true);
    if (answer.error !== undefined && answer.error !== null)
      throw new UpstreamError(
        `${LABEL} upstream failed: ${call.scrub(upstreamErrorText(answer.error))}`,
        true,
      );
    if (!Array.isArray(answer.choices)) throw new UpstreamError(`${LABEL} upstream sent no choices`, true);
    const choices = answer.choices;
    return {
      stream: false,
      contentType: 'application/json; charset=utf-8',
      body,
      outcome: {
        usage: answer.usage ? openAiUsage(answer.usage) : null,
        completionText: () =>
          choices
            .map(
              (c) =>
                `${c?.message?.content ?? ''}${c?.message?.tool_calls ? JSON.stringify(c.message.tool_calls) : ''}`,
            )
            .join(''),
      },
    };
  }

  unsupported(request: ChatRequest, entry?: ModelEntry): Unsupported | null {
    const compat = compatOf(entry);
    if (request.keepAlive !== undefined)
      return {
        field: 'body.keep_alive',
        reason: 'an OpenAI-compatible server does not load or unload a model per request',
      };
    for (const refused of [extraOptionFields(request, compat), thinkFields(request, compat)])
      if ('field' in refused) return refused;
    const g = request.generate;
    if (g?.template !== undefined)
      return { field: 'body.template', reason: 'an OpenAI model takes no prompt template' };
    if (g?.context !== undefined)
      return { field: 'body.context', reason: 'an OpenAI model keeps no token context; send the text' };
    if (completes(request) && request.format !== undefined)
      return {
        field: 'body.format',
        reason: 'an OpenAI completion (suffix, raw) cannot be held to a format',
      };
    if (request.n !== undefined && request.n > 1 && request.tools?.length && !completes(request))
      return { field: 'body.n', reason: 'above 1 with tools is not supported by this gateway' };
    return null;
  }

  async chat(
    request: ChatRequest,
    entry: ModelEntry,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ChatEvent>> {
    if (completes(request)) {
      const call = await this.post(
        entry,
        '/completions',
        openAiCompletionBody(request, compatOf(entry)),
        signal,
        'text/event-stream',
      ).catch((error: unknown) => {
        // A chat-only model: the caller's suffix (or raw prompt) is what cannot be served.
        if (error instanceof UpstreamError && error.status === 404)
          throw new UpstreamError(
            `${request.model} has no /completions endpoint, which a suffix or raw prompt needs (${error.message})`,
            false,
            400,
          );
        throw error;
      });
      return readChatStream(call);
    }
    const call = await this.post(
      entry,
      '/chat/completions',
      openAiChatBody(request, compatOf(entry)),
      signal,
      'text/event-stream',
    );
    return readChatStream(call);
  }

  async moderate(input: unknown, entry: ModelEntry, signal: AbortSignal): Promise<ModerationResult> {
    const call = await this.post(
      entry,
      '/moderations',
      { model: entry.upstreamModel, input },
      signal,
      'application/json',
    );
    const parsed = parseJson(await call.text(), LABEL) as { results?: unknown };
    if (!Array.isArray(parsed.results))
      throw new UpstreamError(`${LABEL} upstream sent no moderation results`, true);
    return { results: parsed.results };
  }

  embedUnsupported(request: EmbedRequest): Unsupported | null {
    return embedOptionRefusal(request);
  }

  async embed(request: EmbedRequest, entry: ModelEntry, signal: AbortSignal): Promise<EmbedResult> {
    const body: Record<string, unknown> = {
      model: request.model,
      input: request.tokens ?? request.input,
      encoding_format: 'float',
    };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    if (request.user !== undefined) body.user = request.user;
    const call = await this.post(entry, '/embeddings', body, signal, 'application/json');
    const parsed = parseJson(await call.text(), LABEL) as {
      data?: Array<{ index?: number; embedding?: unknown }>;
      usage?: { prompt_tokens?: unknown };
    };
    const data = parsed.data;
    const inputs = request.tokens?.length ?? request.input.length;
    if (!Array.isArray(data) || data.length !== inputs) {
      throw new UpstreamError(`${LABEL} upstream sent no embeddings for the ${inputs} inputs`, true);
    }
    const embeddings: number[][] = new Array(data.length);
    for (let i = 0; i < data.length; i++) {
      const item: { index?: number; embedding?: unknown } | undefined = data[i];
      const index = typeof item?.index === 'number' ? item.index : i;
      const vector = decodeEmbedding(item?.embedding);
      if (!vector || index < 0 || index >= data.length || embeddings[index] !== undefined) {
        throw new UpstreamError(`${LABEL} upstream sent a malformed embedding`, true);
      }
      embeddings[index] = vector;
    }
    const tokens = parsed.usage?.prompt_tokens;
    return { embeddings, promptTokens: typeof tokens === 'number' ? tokens : null };
  }
}

/**
 * A completion goes to `/completions` (the legacy API, which has `suffix` and takes the prompt as it
 * is) when the client spoke it, or sent a suffix or a raw prompt; else it is a one-turn chat.
 */
function completes(request: ChatRequest): boolean {
  const g = request.generate;
  return g !== undefined && (g.dialect === 'openai' || g.suffix !== undefined || g.raw === true);
}

const compatOf = (entry: ModelEntry | undefined): OpenAiCompat =>
  (entry?.compat as OpenAiCompat | undefined) ?? 'openai';

function openAiCompletionBody(request: ChatRequest, compat: OpenAiCompat): Record<string, unknown> {
  const g = request.generate;
  // Ollama's `system` has no place in a raw prompt: it goes before it, as a template would put it.
  const prompt = g?.system && g.dialect === 'ollama' ? `${g.system}\n\n${g.prompt}` : (g?.prompt ?? '');
  const body: Record<string, unknown> = {
    model: request.model,
    prompt,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (g?.suffix !== undefined) body.suffix = g.suffix;
  if (request.n !== undefined) body.n = request.n;
  if (request.logprobs) body.logprobs = request.logprobs.top;
  const x = request.openAi ?? {};
  if (x.user !== undefined) body.user = x.user;
  return withSampling(body, request, compat);
}

/** The `/chat/completions` body for a neutral request (always streamed, with usage). */
function openAiChatBody(request: ChatRequest, compat: OpenAiCompat): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: openAiMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  const x = request.openAi ?? {};
  if (request.tools?.length) body.tools = request.tools;
  const choice = request.toolChoice;
  if (choice !== undefined)
    body.tool_choice =
      typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  if (x.parallelToolCalls !== undefined) body.parallel_tool_calls = x.parallelToolCalls;
  if (request.format === 'json') body.response_format = { type: 'json_object' };
  else if (request.format !== undefined) {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: x.schemaName ?? 'response',
        schema: request.format,
        strict: x.schemaStrict === undefined ? true : x.schemaStrict,
      },
    };
  }
  const effort = reasoningLevel(request);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (x.user !== undefined) body.user = x.user;
  if (x.metadata !== undefined) body.metadata = x.metadata;
  if (x.store !== undefined) body.store = x.store;
  if (x.serviceTier !== undefined) body.service_tier = x.serviceTier;
  if (request.n !== undefined) body.n = request.n;
  if (request.logprobs) {
    body.logprobs = true;
    if (request.logprobs.top > 0) body.top_logprobs = request.logprobs.top;
  }
  return withSampling(body, request, compat);
}

/** Sampling options, and the Ollama options and thinking switch the server takes (checked by `unsupported`). */
function withSampling(
  body: Record<string, unknown>,
  request: ChatRequest,
  compat: OpenAiCompat,
): Record<string, unknown> {
  for (const more of [extraOptionFields(request, compat), thinkFields(request, compat)])
    if ('fields' in more) Object.assign(body, more.fields);
  const x = request.openAi ?? {};
  const o = request.options;
  if (o.temperature !== undefined) body.temperature = o.temperature;
  if (o.topP !== undefined) body.top_p = o.topP;
  // Not in OpenAI's own API, but vLLM, llama.cpp, LM Studio and OpenRouter take it; OpenAI answers a
  // 400 naming it, which the caller sees. Sent either way: never accepted and dropped.
  if (o.topK !== undefined) body.top_k = o.topK;
  if (o.maxTokens !== undefined)
    body[x.maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = o.maxTokens;
  if (o.stop?.length) body.stop = o.stop;
  if (o.seed !== undefined) body.seed = o.seed;
  if (o.presencePenalty !== undefined) body.presence_penalty = o.presencePenalty;
  if (o.frequencyPenalty !== undefined) body.frequency_penalty = o.frequencyPenalty;
  return body;
}

/**
 * OpenAI messages. Tool calls need ids that the tool answers repeat; a conversation that came in
 * through the Ollama surface has none, so ids are made up per assistant turn and the tool messages
 * after it are matched to them by tool name (else in order).
 */
function openAiMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  let open: Array<{ id: string; name: string }> = [];
  return messages.map((message, m) => {
    switch (message.role) {
      case 'assistant': {
        const out: Record<string, unknown> = { role: 'assistant', content: message.content || null };
        if (message.name !== undefined) out.name = message.name;
        if (message.toolCalls?.length) {
          open = message.toolCalls.map((call, i) => ({ id: call.id ?? `call_${m}_${i}`, name: call.name }));
          out.tool_calls = message.toolCalls.map((call, i) => ({
            id: open[i]?.id,
            type: 'function',
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          }));
        }
        return out;
      }
      case 'tool': {
        let id = message.toolCallId;
        if (id === undefined) {
          const at = open.findIndex((call) => call.name === message.toolName);
          const match = open.splice(at === -1 ? 0 : at, 1)[0];
          id = match?.id ?? `call_${m}`;
        }
        return { role: 'tool', tool_call_id: id, content: toolResultText(message) };
      }
      default: {
        const out: Record<string, unknown> = { role: message.role, content: message.content };
        if (message.name !== undefined) out.name = message.name;
        if (!message.images?.length && !message.files?.length) return out;
        const parts: Record<string, unknown>[] = [];
        if (message.content) parts.push({ type: 'text', text: message.content });
        message.images?.forEach((image, i) => {
          const detail = message.imageDetails?.find((d) => d.image === i)?.detail;
          const url: Record<string, unknown> = { url: imageUrl(image) };
          if (detail !== undefined) url.detail = detail;
          parts.push({ type: 'image_url', image_url: url });
        });
        for (const file of message.files ?? []) parts.push(filePart(file));
        out.content = parts;
        return out;
      }
    }
  });
}

/**
 * A document as Chat Completions takes it: a `file` part with a data URL. Its `file` input reads PDFs,
 * so a text document goes as text, which every OpenAI-compatible server reads.
 */
function filePart(file: FileInput): Record<string, unknown> {
  if (isTextDocument(file.mediaType)) return { type: 'text', text: documentText(file) };
  return {
    type: 'file',
    file: { filename: file.filename ?? 'file', file_data: `data:${file.mediaType};base64,${file.data}` },
  };
}

/** A data URL for a base64 image (its type sniffed from the first bytes); URLs pass as they are. */
function imageUrl(image: string): string {
  if (image.startsWith('data:') || image.startsWith('https://') || image.startsWith('http://')) return image;
  const type = image.startsWith('/9j/')
    ? 'image/jpeg'
    : image.startsWith('R0lGOD')
      ? 'image/gif'
      : image.startsWith('UklGR')
        ? 'image/webp'
        : 'image/png';
  return `data:${type};base64,${image}`;
}

/** The events of one SSE stream; throws `UpstreamError` on anything but a clean end. */
async function* readChatStream(call: UpstreamCall): AsyncGenerator<ChatEvent, void, undefined> {
  const sse = new SseParser();
  const pending: PendingToolCall[] = [];
  let finishReason: string | null = null;
  const reasons: string[] = [];
  let usage: TokenUsage | null = null;
  let complete = false;
  const lines = call.lines();
  for await (const line of lines) {
    const event = sse.push(line);
    if (event === null) continue;
    if (event.data === '[DONE]') {
      complete = true;
      call.release();
      break;
    }
    const chunk = parseJson(event.data, LABEL) as OpenAiChunk;
    if (chunk === null || typeof chunk !== 'object') {
      throw new UpstreamError(`${LABEL} upstream sent an event that is not an object`, true);
    }
    if (event.event === 'error' || (chunk.error !== undefined && chunk.error !== null)) {
      throw new UpstreamError(
        `${LABEL} upstream failed: ${call.scrub(upstreamErrorText(chunk.error ?? chunk))}`,
        true,
      );
    }
    if (chunk.usage) usage = openAiUsage(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      // `n` > 1: the answers interleave, each under its index (tool calls only with one answer).
      const index = typeof choice.index === 'number' && choice.index > 0 ? choice.index : 0;
      if (index > MAX_CHOICES) throw new UpstreamError(`${LABEL} upstream sent too many choices`, true);
      const delta = choice.delta;
      const thinking = delta?.reasoning_content || delta?.reasoning;
      const content = delta ? delta.content : choice.text;
      const logprobs = logprobsOf(choice.logprobs);
      if (content || thinking || logprobs) {
        const out: ChatEvent = { type: 'delta' };
        if (content) out.content = content;
        if (thinking) out.thinking = thinking;
        if (logprobs) out.logprobs = logprobs;
        if (index > 0) out.choice = index;
        yield out;
      }
      if (delta?.tool_calls && index === 0) addFragments(pending, delta.tool_calls);
      if (choice.finish_reason) {
        const reason = choice.finish_reason === 'function_call' ? 'tool_calls' : choice.finish_reason;
        reasons[index] = reason;
        if (index === 0) finishReason = reason;
        if (index === 0 && pending.length) yield { type: 'delta', toolCalls: finishToolCalls(pending) };
      }
    }
  }
  // A stream that ended cleanly after its finish_reason is accepted without `[DONE]` (some
  // compatible servers omit it); one cut before either is not.
  if (!complete && sse.end()?.data === '[DONE]') complete = true;
  if (!complete && finishReason === null) {
    throw new UpstreamError(`${LABEL} upstream ended the stream before its final event`, true);
  }
  if (pending.length) yield { type: 'delta', toolCalls: finishToolCalls(pending) };
  const done: ChatEvent = { type: 'done', doneReason: finishReason ?? 'stop', usage };
  if (reasons.length > 1) done.choiceReasons = Array.from(reasons, (r) => r ?? 'stop');
  yield done;
}

/** The code of the first character after `"key":` (and spaces) in a frame's JSON, or -1. */
function valueStart(data: string, key: string): number {
  let at = data.indexOf(key);
  if (at === -1) return -1;
  at += key.length;
  while (data.charCodeAt(at) === 32) at++;
  return data.charCodeAt(at);
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const QUOTE = 34;

/**
 * A relayed stream: each read of the upstream goes on as one string of whole `data:` frames, the
 * frames as they came. A frame is parsed only when it must be: one that is not an object, names an
 * error or carries the usage (dropped when the client did not ask for it: the gateway did). Ends
 * with the usage and the answer's text (read only if the upstream sent no counts).
 */
async function* relayFrames(
  call: UpstreamCall,
  includeUsage: boolean,
): AsyncGenerator<string, RelayOutcome, undefined> {
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  const sse = new SseParser();
  const lines: string[] = [];
  const frames: string[] = [];
  let usage: TokenUsage | null = null;
  let finished = false;
  let complete = false;
  const outcome = (): RelayOutcome => ({ usage, completionText: () => relayedText(frames) });
  for await (const read of call.chunks()) {
    lines.length = 0;
    if (!splitter.push(read, lines))
      throw new UpstreamError(`${LABEL} upstream sent a line over ${MAX_LINE_BYTES} bytes`, true);
    let out = '';
    try {
      for (const line of lines) {
        const event = sse.push(line);
        if (event === null) continue;
        const data = event.data;
        if (data === '[DONE]') {
          complete = true;
          break;
        }
        let chunk: OpenAiChunk | null = null;
        if (
          event.event !== undefined ||
          data.charCodeAt(0) !== OPEN_BRACE ||
          data.charCodeAt(data.length - 1) !== CLOSE_BRACE ||
          data.includes('"error"')
        ) {
          chunk = parseJson(data, LABEL) as OpenAiChunk;
          if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk))
            throw new UpstreamError(`${LABEL} upstream sent an event that is not an object`, true);
          if (event.event === 'error' || (chunk.error !== undefined && chunk.error !== null))
            throw new UpstreamError(
              `${LABEL} upstream failed: ${call.scrub(upstreamErrorText(chunk.error ?? chunk))}`,
              true,
            );
        }
        if (!finished && valueStart(data, '"finish_reason":') === QUOTE) finished = true;
        if (valueStart(data, '"usage":') === OPEN_BRACE) {
          chunk ??= parseJson(data, LABEL) as OpenAiChunk;
          if (chunk.usage) usage = openAiUsage(chunk.usage);
          if (!includeUsage) {
            // The usage frame the gateway asked for; usage beside choices is blanked as OpenAI's are.
            if (!chunk.choices?.length) continue;
            frames.push(data);
            out += `data: ${JSON.stringify({ ...chunk, usage: null })}\n\n`;
            continue;
          }
        }
        frames.push(data);
        out += `data: ${data}\n\n`;
      }
    } catch (error) {
      // The frames before a broken one still reach the client, then the error does.
      if (out !== '') yield out;
      throw error;
    }
    if (complete) {
      call.release();
      yield `${out}data: [DONE]\n\n`;
      return outcome();
    }
    if (out !== '') yield out;
  }
  const last = splitter.flush();
  if (last !== null) sse.push(last);
  // As `readChatStream`: a clean end after the finish_reason is accepted without `[DONE]`.
  if (sse.end()?.data === '[DONE]' || finished) {
    yield 'data: [DONE]\n\n';
    return outcome();
  }
  throw new UpstreamError(`${LABEL} upstream ended the stream before its final event`, true);
}

/** The texts of relayed frames (content, reasoning, tool call pieces), to estimate their tokens. */
function relayedText(frames: readonly string[]): string {
  let text = '';
  for (const data of frames) {
    try {
      const chunk = JSON.parse(data) as OpenAiChunk;
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta;
        text += delta?.content ?? choice.text ?? '';
        text += delta?.reasoning_content ?? delta?.reasoning ?? '';
        for (const call of delta?.tool_calls ?? []) text += call.function?.arguments ?? '';
      }
    } catch {
      // relayed as it came; it adds nothing to count
    }
  }
  return text;
}

/** The most answers one request may ask for (OpenAI's own bound on `n`). */
const MAX_CHOICES = 128;

/**
 * Log probabilities as chat chunks carry them (`{content: [{token, logprob, bytes, top_logprobs}]}`)
 * or as legacy completions do (`{tokens, token_logprobs, top_logprobs: [{token: logprob}]}`).
 */
function logprobsOf(value: unknown): TokenLogprob[] | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as {
    content?: unknown;
    tokens?: unknown;
    token_logprobs?: unknown;
    top_logprobs?: unknown;
  };
  const out: TokenLogprob[] = [];
  if (Array.isArray(v.content)) {
    for (const item of v.content as Array<Record<string, unknown>>) {
      if (typeof item?.token !== 'string' || typeof item.logprob !== 'number')
        throw new UpstreamError(`${LABEL} upstream sent a malformed logprobs entry`, true);
      const token: TokenLogprob = { token: item.token, logprob: item.logprob };
      if (Array.isArray(item.bytes)) token.bytes = item.bytes as number[];
      if (Array.isArray(item.top_logprobs))
        token.top = (item.top_logprobs as Array<Record<string, unknown>>)
          .filter((t) => typeof t?.token === 'string' && typeof t.logprob === 'number')
          .map((t) => ({ token: t.token as string, logprob: t.logprob as number }));
      out.push(token);
    }
  } else if (Array.isArray(v.tokens) && Array.isArray(v.token_logprobs)) {
    const tops = Array.isArray(v.top_logprobs) ? v.top_logprobs : [];
    v.tokens.forEach((token, i) => {
      const logprob = (v.token_logprobs as unknown[])[i];
      if (typeof token !== 'string') return;
      const entry: TokenLogprob = { token, logprob: typeof logprob === 'number' ? logprob : 0 };
      const top = tops[i];
      if (top && typeof top === 'object')
        entry.top = Object.entries(top as Record<string, unknown>)
          .filter(([, lp]) => typeof lp === 'number')
          .map(([t, lp]) => ({ token: t, logprob: lp as number }));
      out.push(entry);
    });
  }
  return out.length ? out : undefined;
}

/** Merges streamed fragments into the calls they extend, by index. */
function addFragments(pending: PendingToolCall[], fragments: ToolCallFragment[]): void {
  for (const fragment of fragments) {
    const index = typeof fragment.index === 'number' ? fragment.index : pending.length;
    let call = pending[index];
    if (!call) {
      call = { id: undefined, name: '', arguments: '' };
      pending[index] = call;
    }
    if (fragment.id) call.id = fragment.id;
    const fn = fragment.function;
    if (fn?.name) call.name += fn.name;
    if (fn?.arguments) call.arguments += fn.arguments;
  }
}

/** The complete calls (arguments parsed), emptying `pending`. */
function finishToolCalls(pending: PendingToolCall[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const call of pending) {
    if (!call) continue; // an index the upstream skipped
    if (!call.name) throw new UpstreamError(`${LABEL} upstream sent a tool call without a name`, true);
    const args = call.arguments.trim() === '' ? {} : parseJson(call.arguments, LABEL);
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new UpstreamError(`${LABEL} upstream sent tool call arguments that are not an object`, true);
    }
    const out: ToolCall = { name: call.name, arguments: args as Record<string, unknown> };
    if (call.id) out.id = call.id;
    calls.push(out);
  }
  pending.length = 0;
  return calls;
}

function openAiUsage(usage: { prompt_tokens?: number; completion_tokens?: number }): TokenUsage | null {
  if (typeof usage.prompt_tokens !== 'number' && typeof usage.completion_tokens !== 'number') return null;
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    estimated: false,
  };
}

/** A float array, or OpenAI's base64 little-endian float32 form. */
function decodeEmbedding(value: unknown): number[] | null {
  if (Array.isArray(value)) return value.every((x) => typeof x === 'number') ? (value as number[]) : null;
  if (typeof value !== 'string') return null;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length % 4 !== 0) return null;
  const out: number[] = new Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

function openAiErrorMessage(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'error' in body) return upstreamErrorText(body.error);
  return undefined;
}
