import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { ConfiguredModel } from './model-file.js';
import type { OpenAiChatBodyT, OpenAiCompletionBodyT, OpenAiMessageT } from './openai-schemas.js';
import type {
  ChatEvent,
  ChatMessage,
  ChatOptions,
  ChatRequest,
  OpenAiExtras,
  TokenLogprob,
  ToolCall,
  ToolSpec,
} from './types.js';

const DATA_URL = /^data:[^;,]+;base64,/;

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid body: body.${field} ${message}`, {
    fields: [{ field: `body.${field}`, message }],
  });
}

function parseArguments(text: string, field: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw invalid(field, 'must be a JSON object in a string');
}

function messageFromOpenAi(m: OpenAiMessageT, index: number): ChatMessage {
  const out: ChatMessage = { role: m.role === 'developer' ? 'system' : m.role, content: '' };
  if (typeof m.content === 'string') out.content = m.content;
  else if (Array.isArray(m.content)) {
    const texts: string[] = [];
    m.content.forEach((part, p) => {
      if (part.type === 'text') {
        // OpenAI requires it; an empty text would otherwise stand in for a part sent by mistake.
        if (typeof part.text !== 'string')
          throw invalid(`messages.${index}.content.${p}.text`, 'is required for a text part');
        texts.push(part.text);
      } else if (part.type === 'image_url') {
        const url = part.image_url?.url ?? '';
        // Only inline images: fetching a caller's URL from here would be an open proxy.
        if (!DATA_URL.test(url))
          throw invalid(`messages.${index}.content.${p}.image_url.url`, 'must be a base64 data: URL');
        const images = out.images ?? [];
        const detail = part.image_url?.detail;
        if (detail !== undefined)
          out.imageDetails = [...(out.imageDetails ?? []), { image: images.length, part: p, detail }];
        images.push(url.replace(DATA_URL, ''));
        out.images = images;
      } else throw invalid(`messages.${index}.content.${p}.type`, `'${part.type}' is not supported`);
    });
    out.content = texts.join('\n');
  }
  // A tool message's name is its tool's (Ollama's tool_name); another role's is the participant's.
  if (m.name !== undefined) {
    if (m.role === 'tool') out.toolName = m.name;
    else out.name = m.name;
  }
  if (m.tool_calls?.length) {
    out.toolCalls = m.tool_calls.map((c, i) => ({
      id: c.id,
      name: c.function.name,
      arguments: parseArguments(c.function.arguments, `messages.${index}.tool_calls.${i}.function.arguments`),
    }));
  }
  if (m.role === 'tool') {
    if (!m.tool_call_id) throw invalid(`messages.${index}.tool_call_id`, 'is required for role tool');
    out.toolCallId = m.tool_call_id;
  }
  return out;
}

/** The neutral chat of an OpenAI body; a tool message also names its tool (Ollama upstreams need it). */
export function chatFromOpenAi(body: OpenAiChatBodyT): Omit<ChatRequest, 'model'> {
  const messages = body.messages.map(messageFromOpenAi);
  const toolNames = new Map<string, string>();
  for (const m of messages)
    for (const call of m.toolCalls ?? []) if (call.id) toolNames.set(call.id, call.name);
  for (const m of messages) {
    const name = m.toolCallId ? toolNames.get(m.toolCallId) : undefined;
    if (name && m.toolName === undefined) m.toolName = name;
  }
  const options: ChatOptions = {};
  if (body.temperature != null) options.temperature = body.temperature;
  if (body.top_p != null) options.topP = body.top_p;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) options.maxTokens = maxTokens;
  const extras: OpenAiExtras = {};
  if (body.max_completion_tokens != null) extras.maxCompletionTokens = true;
  if (body.user != null) extras.user = body.user;
  if (body.metadata != null) extras.metadata = body.metadata;
  if (body.store != null) extras.store = body.store;
  if (body.service_tier != null) extras.serviceTier = body.service_tier;
  if (body.reasoning_effort != null) extras.reasoningEffort = body.reasoning_effort;
  if (body.parallel_tool_calls != null) extras.parallelToolCalls = body.parallel_tool_calls;
  if (body.top_logprobs != null && body.top_logprobs > 0 && body.logprobs !== true)
    throw invalid('top_logprobs', 'needs logprobs: true');
  if (body.stop != null) options.stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.seed != null) options.seed = body.seed;
  if (body.presence_penalty != null) options.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) options.frequencyPenalty = body.frequency_penalty;
  const out: Omit<ChatRequest, 'model'> = { messages, options };
  if (body.logprobs === true) out.logprobs = { top: body.top_logprobs ?? 0 };
  if (body.n != null && body.n > 1) out.n = body.n;
  if (body.tools?.length) out.tools = body.tools as ToolSpec[];
  const choice = body.tool_choice;
  if (choice != null) {
    if (typeof choice === 'object') {
      const name = choice.function.name;
      if (!out.tools?.some((t) => t.function.name === name))
        throw invalid('tool_choice.function.name', `names '${name}', which is not in tools`);
      out.toolChoice = { name };
    } else {
      if (choice === 'required' && !out.tools)
        throw invalid('tool_choice', "is 'required' but no tools were sent");
      out.toolChoice = choice;
    }
  }
  const format = body.response_format;
  if (format?.type === 'json_object') out.format = 'json';
  else if (format?.type === 'json_schema') {
    if (!format.json_schema?.schema) throw invalid('response_format.json_schema.schema', 'is required');
    out.format = format.json_schema.schema as Record<string, unknown>;
    if (format.json_schema.name != null) extras.schemaName = format.json_schema.name;
    if (format.json_schema.strict !== undefined) extras.schemaStrict = format.json_schema.strict;
  }
  for (const _ in extras) {
    out.openAi = extras;
    break;
  }
  return out;
}

/**
 * A legacy completion in the neutral form: the prompt and suffix travel in `generate` (an OpenAI
 * upstream gets `/completions`, an Ollama one `/api/generate`); what no provider is asked for is refused.
 */
export function completionFromOpenAi(body: OpenAiCompletionBodyT): Omit<ChatRequest, 'model'> {
  if (body.echo === true) throw invalid('echo', 'is not supported by this gateway');
  if (body.best_of != null && body.best_of > 1) throw invalid('best_of', 'is not supported by this gateway');
  if (body.logit_bias != null && Object.keys(body.logit_bias).length > 0)
    throw invalid('logit_bias', 'is not supported by this gateway');
  const prompt = typeof body.prompt === 'string' ? body.prompt : (body.prompt[0] ?? '');
  const options: ChatOptions = {};
  if (body.temperature != null) options.temperature = body.temperature;
  if (body.top_p != null) options.topP = body.top_p;
  if (body.max_tokens != null) options.maxTokens = body.max_tokens;
  if (body.stop != null) options.stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.seed != null) options.seed = body.seed;
  if (body.presence_penalty != null) options.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) options.frequencyPenalty = body.frequency_penalty;
  const out: Omit<ChatRequest, 'model'> = {
    messages: [{ role: 'user', content: prompt }],
    options,
    generate: { prompt, dialect: 'openai', ...(body.suffix != null ? { suffix: body.suffix } : {}) },
  };
  if (body.n != null && body.n > 1) out.n = body.n;
  if (body.logprobs != null) out.logprobs = { top: body.logprobs };
  if (body.user != null) out.openAi = { user: body.user };
  return out;
}

const FINISH: Record<string, string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls' };

/** One answer of a completion being written (`n` > 1 writes several). */
interface Choice {
  content: string;
  toolCalls: ToolCall[];
  logprobs: TokenLogprob[];
  sentRole: boolean;
  toolIndex: number;
}

const newChoice = (): Choice => ({ content: '', toolCalls: [], logprobs: [], sentRole: false, toolIndex: 0 });

/** A token's log probability as a chat completion writes it. */
function logprobOf(t: TokenLogprob) {
  return {
    token: t.token,
    logprob: t.logprob,
    bytes: t.bytes ?? null,
    top_logprobs: (t.top ?? []).map((x) => ({ token: x.token, logprob: x.logprob, bytes: x.bytes ?? null })),
  };
}

/** OpenAI's `chat.completion` and `chat.completion.chunk` objects from neutral events. */
export class OpenAiWriter {
  // randomUUID draws from a pooled buffer; randomBytes per answer was a syscall each.
  readonly id = `chatcmpl-${randomUUID()}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly choices: Choice[];

  constructor(
    private readonly model: ConfiguredModel,
    private readonly n = 1,
    /** The client asked for log probabilities: `logprobs` is an object, not null. */
    private readonly withLogprobs = false,
  ) {
    this.choices = Array.from({ length: n }, newChoice);
  }

  private head(object: 'chat.completion' | 'chat.completion.chunk') {
    return { id: this.id, object, created: this.created, model: this.model.name, system_fingerprint: null };
  }

  private choiceOf(event: { choice?: number }): [number, Choice] {
    const index = event.choice ?? 0;
    if (index >= this.n)
      throw new AppError('UPSTREAM_ERROR', `the model sent an answer beyond n = ${this.n}`);
    return [index, this.choices[index] as Choice];
  }

  private static wireCalls(calls: readonly ToolCall[], firstIndex: number) {
    return calls.map((c, i) => ({
      index: firstIndex + i,
      id: c.id ?? `call_${randomBytes(9).toString('base64url')}`,
      type: 'function' as const,
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }

  private reasonOf(event: Extract<ChatEvent, { type: 'done' }>, index: number, choice: Choice): string {
    if (choice.toolIndex > 0 || choice.toolCalls.length > 0) return 'tool_calls';
    const reason = event.choiceReasons?.[index] ?? event.doneReason;
    return FINISH[reason] ?? 'stop';
  }

  /** The chunks for one event: a delta, or the finishing chunks (and a usage chunk when asked). */
  chunks(event: ChatEvent, includeUsage: boolean): Record<string, unknown>[] {
    if (event.type === 'delta') {
      const [index, choice] = this.choiceOf(event);
      const delta: Record<string, unknown> = {};
      if (!choice.sentRole) {
        delta.role = 'assistant';
        choice.sentRole = true;
      }
      if (event.content !== undefined || !event.toolCalls) delta.content = event.content ?? '';
      if (event.toolCalls?.length) {
        delta.tool_calls = OpenAiWriter.wireCalls(event.toolCalls, choice.toolIndex);
        choice.toolIndex += event.toolCalls.length;
      }
      const logprobs = event.logprobs ? { content: event.logprobs.map(logprobOf), refusal: null } : null;
      return [
        {
          ...this.head('chat.completion.chunk'),
          choices: [{ index, delta, logprobs, finish_reason: null }],
        },
      ];
    }
    const out: Record<string, unknown>[] = this.choices.map((choice, index) => ({
      ...this.head('chat.completion.chunk'),
      choices: [{ index, delta: {}, logprobs: null, finish_reason: this.reasonOf(event, index, choice) }],
    }));
    if (includeUsage) out.push({ ...this.head('chat.completion.chunk'), choices: [], usage: usageOf(event) });
    return out;
  }

  /** Adds an event to a `stream:false` answer; returns the completion at `done`. */
  collect(event: ChatEvent): Record<string, unknown> | null {
    if (event.type === 'delta') {
      const [, choice] = this.choiceOf(event);
      choice.content += event.content ?? '';
      if (event.toolCalls) choice.toolCalls.push(...event.toolCalls);
      if (event.logprobs) choice.logprobs.push(...event.logprobs);
      return null;
    }
    return {
      ...this.head('chat.completion'),
      choices: this.choices.map((choice, index) => {
        const message: Record<string, unknown> = {
          role: 'assistant',
          content: choice.toolCalls.length > 0 && choice.content === '' ? null : choice.content,
          refusal: null,
        };
        if (choice.toolCalls.length > 0) message.tool_calls = OpenAiWriter.wireCalls(choice.toolCalls, 0);
        const logprobs = this.withLogprobs
          ? { content: choice.logprobs.map(logprobOf), refusal: null }
          : null;
        return { index, message, logprobs, finish_reason: this.reasonOf(event, index, choice) };
      }),
      usage: usageOf(event),
    };
  }
}

/** OpenAI's legacy `text_completion` objects (`/v1/completions`) from neutral events. */
export class CompletionWriter {
  readonly id = `cmpl-${randomUUID()}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly texts: string[];
  private readonly logprobs: TokenLogprob[][];

  constructor(
    private readonly model: ConfiguredModel,
    private readonly n = 1,
    private readonly withLogprobs = false,
  ) {
    this.texts = Array.from({ length: n }, () => '');
    this.logprobs = Array.from({ length: n }, () => []);
  }

  private head() {
    return { id: this.id, object: 'text_completion', created: this.created, model: this.model.name };
  }

  private static legacyLogprobs(tokens: readonly TokenLogprob[]) {
    return {
      tokens: tokens.map((t) => t.token),
      token_logprobs: tokens.map((t) => t.logprob),
      top_logprobs: tokens.map((t) => Object.fromEntries((t.top ?? []).map((x) => [x.token, x.logprob]))),
      text_offset: offsetsOf(tokens),
    };
  }

  private indexOf(event: { choice?: number }): number {
    const index = event.choice ?? 0;
    if (index >= this.n)
      throw new AppError('UPSTREAM_ERROR', `the model sent an answer beyond n = ${this.n}`);
    return index;
  }

  chunks(event: ChatEvent, includeUsage: boolean): Record<string, unknown>[] {
    if (event.type === 'delta') {
      const index = this.indexOf(event);
      if (!event.content && !event.logprobs) return [];
      const logprobs = event.logprobs ? CompletionWriter.legacyLogprobs(event.logprobs) : null;
      return [
        {
          ...this.head(),
          choices: [{ text: event.content ?? '', index, logprobs, finish_reason: null }],
        },
      ];
    }
    const out: Record<string, unknown>[] = this.texts.map((_, index) => ({
      ...this.head(),
      choices: [{ text: '', index, logprobs: null, finish_reason: reasonOf(event, index) }],
    }));
    if (includeUsage) out.push({ ...this.head(), choices: [], usage: usageOf(event) });
    return out;
  }

  collect(event: ChatEvent): Record<string, unknown> | null {
    if (event.type === 'delta') {
      const index = this.indexOf(event);
      this.texts[index] += event.content ?? '';
      if (event.logprobs) this.logprobs[index]?.push(...event.logprobs);
      return null;
    }
    return {
      ...this.head(),
      choices: this.texts.map((text, index) => ({
        text,
        index,
        logprobs: this.withLogprobs ? CompletionWriter.legacyLogprobs(this.logprobs[index] ?? []) : null,
        finish_reason: reasonOf(event, index),
      })),
      usage: usageOf(event),
    };
  }
}

/** Where each token starts in the text (the legacy logprobs' `text_offset`). */
function offsetsOf(tokens: readonly TokenLogprob[]): number[] {
  const out: number[] = [];
  let at = 0;
  for (const t of tokens) {
    out.push(at);
    at += t.token.length;
  }
  return out;
}

function reasonOf(event: Extract<ChatEvent, { type: 'done' }>, index: number): string {
  const reason = event.choiceReasons?.[index] ?? event.doneReason;
  return reason === 'length' ? 'length' : 'stop';
}

function usageOf(event: Extract<ChatEvent, { type: 'done' }>) {
  const prompt = event.usage?.promptTokens ?? 0;
  const completion = event.usage?.completionTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** An embedding as OpenAI sends it for `encoding_format: "base64"`: little-endian float32. */
export function base64Embedding(vector: readonly number[]): string {
  const buffer = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buffer.writeFloatLE(vector[i] ?? 0, i * 4);
  return buffer.toString('base64');
}
