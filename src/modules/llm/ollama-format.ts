import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { ConfiguredModel } from './model-file.js';
import type { OllamaChatBodyT, OllamaGenerateBodyT, OllamaMessageT } from './ollama-schemas.js';
import type {
  ChatEvent,
  ChatMessage,
  ChatOptions,
  ChatRequest,
  GenerateInput,
  TokenLogprob,
  ToolCall,
  ToolSpec,
} from './types.js';

type OllamaOptionsT = NonNullable<OllamaChatBodyT['options']>;

/** Ollama's sampling options in the neutral form; the rest pass through to an Ollama upstream. */
export function optionsFromOllama(options: OllamaOptionsT | undefined): ChatOptions {
  if (!options) return {};
  const {
    temperature,
    top_p,
    top_k,
    num_predict,
    stop,
    seed,
    presence_penalty,
    frequency_penalty,
    ...extra
  } = options;
  const out: ChatOptions = {};
  if (temperature !== undefined) out.temperature = temperature;
  if (top_p !== undefined) out.topP = top_p;
  if (top_k !== undefined) out.topK = top_k;
  if (num_predict !== undefined && num_predict > 0) out.maxTokens = num_predict;
  if (stop !== undefined) out.stop = stop;
  if (seed !== undefined) out.seed = seed;
  if (presence_penalty !== undefined) out.presencePenalty = presence_penalty;
  if (frequency_penalty !== undefined) out.frequencyPenalty = frequency_penalty;
  if (Object.keys(extra).length > 0) out.extra = extra;
  return out;
}

function messageFromOllama(m: OllamaMessageT): ChatMessage {
  const out: ChatMessage = { role: m.role, content: m.content ?? '' };
  if (m.images?.length) out.images = m.images;
  if (m.tool_calls?.length)
    out.toolCalls = m.tool_calls.map((c) => ({
      name: c.function.name,
      arguments: (c.function.arguments ?? {}) as Record<string, unknown>,
    }));
  if (m.tool_name) out.toolName = m.tool_name;
  if (m.thinking) out.thinking = m.thinking;
  return out;
}

function formatOf(format: OllamaChatBodyT['format']): ChatRequest['format'] {
  if (format === undefined || format === '') return undefined;
  return format === 'json' ? 'json' : (format as Record<string, unknown>);
}

function common(body: OllamaChatBodyT | OllamaGenerateBodyT): Omit<ChatRequest, 'model' | 'messages'> {
  const out: Omit<ChatRequest, 'model' | 'messages'> = { options: optionsFromOllama(body.options) };
  const format = formatOf(body.format);
  if (format) out.format = format;
  if (body.keep_alive !== undefined) out.keepAlive = body.keep_alive;
  if (body.think !== undefined) out.think = body.think !== false;
  // A level is kept: an Ollama upstream gets it back, OpenAI's reads it as reasoning_effort.
  if (typeof body.think === 'string') out.openAi = { reasoningEffort: body.think };
  if (body.logprobs === true) out.logprobs = { top: body.top_logprobs ?? 0 };
  else if (body.top_logprobs !== undefined && body.top_logprobs > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid body: body.top_logprobs needs logprobs: true', {
      fields: [{ field: 'body.top_logprobs', message: 'needs logprobs: true' }],
    });
  return out;
}

export function chatFromOllama(body: OllamaChatBodyT): Omit<ChatRequest, 'model'> {
  const out: Omit<ChatRequest, 'model'> = {
    ...common(body),
    messages: (body.messages ?? []).map(messageFromOllama),
  };
  if (body.tools?.length) out.tools = body.tools as ToolSpec[];
  return out;
}

/**
 * `/api/generate` as a completion: the fields a chat has no word for travel in `generate` (an
 * Ollama upstream gets a real generate); `messages` holds the one-turn chat for the other providers.
 */
export function chatFromGenerate(body: OllamaGenerateBodyT): Omit<ChatRequest, 'model'> {
  const messages: ChatMessage[] = [];
  if (body.system) messages.push({ role: 'system', content: body.system });
  const prompt: ChatMessage = { role: 'user', content: body.prompt ?? '' };
  if (body.images?.length) prompt.images = body.images;
  messages.push(prompt);
  const generate: GenerateInput = { prompt: body.prompt ?? '', dialect: 'ollama' };
  if (body.suffix !== undefined && body.suffix !== '') generate.suffix = body.suffix;
  if (body.system !== undefined) generate.system = body.system;
  if (body.raw !== undefined) generate.raw = body.raw;
  if (body.template !== undefined && body.template !== '') generate.template = body.template;
  if (body.context?.length) generate.context = body.context;
  return { ...common(body), messages, generate };
}

const toolCallsOf = (calls: readonly ToolCall[]) =>
  calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }));

/** Builds Ollama's objects from neutral events, measuring what the upstream did not report. */
export class OllamaWriter {
  private readonly started: number;
  private firstAt: number | null = null;
  private content = '';
  private thinking = '';
  private readonly toolCalls: ToolCall[] = [];
  private readonly logprobs: TokenLogprob[] = [];

  constructor(
    private readonly model: ConfiguredModel,
    private readonly kind: 'chat' | 'generate',
    private readonly now: () => number,
    started: number,
  ) {
    this.started = started;
  }

  private head(): { model: string; created_at: string } {
    return { model: this.model.name, created_at: new Date().toISOString() };
  }

  private body(content: string, thinking?: string, toolCalls?: readonly ToolCall[]): Record<string, unknown> {
    if (this.kind === 'generate') {
      const out: Record<string, unknown> = { response: content };
      if (thinking) out.thinking = thinking;
      return out;
    }
    const message: Record<string, unknown> = { role: 'assistant', content };
    if (thinking) message.thinking = thinking;
    if (toolCalls?.length) message.tool_calls = toolCallsOf(toolCalls);
    return { message };
  }

  /** A stream chunk for an event (`done` included). */
  chunk(event: ChatEvent): Record<string, unknown> {
    if (event.type === 'delta') {
      if (this.firstAt === null) this.firstAt = this.now();
      const out: Record<string, unknown> = {
        ...this.head(),
        ...this.body(event.content ?? '', event.thinking, event.toolCalls),
        done: false,
      };
      if (event.logprobs) out.logprobs = event.logprobs.map(logprobOf);
      return out;
    }
    return { ...this.head(), ...this.body(''), ...this.doneFields(event) };
  }

  /** Adds an event to the one object of a `stream:false` answer; returns it at `done`. */
  collect(event: ChatEvent): Record<string, unknown> | null {
    if (event.type === 'delta') {
      if (this.firstAt === null) this.firstAt = this.now();
      this.content += event.content ?? '';
      this.thinking += event.thinking ?? '';
      if (event.toolCalls) this.toolCalls.push(...event.toolCalls);
      if (event.logprobs) this.logprobs.push(...event.logprobs);
      return null;
    }
    const out: Record<string, unknown> = {
      ...this.head(),
      ...this.body(this.content, this.thinking, this.toolCalls),
      ...this.doneFields(event),
    };
    if (this.logprobs.length) out.logprobs = this.logprobs.map(logprobOf);
    return out;
  }

  private doneFields(event: Extract<ChatEvent, { type: 'done' }>): Record<string, unknown> {
    const end = this.now();
    const first = this.firstAt ?? end;
    const ms = (v: number) => Math.round(v * 1e6);
    const t = event.timings ?? {};
    const context = this.kind === 'generate' && event.context ? { context: event.context } : {};
    return {
      ...context,
      done: true,
      // Ollama reports tool calls as `stop`; OpenAI-style `tool_calls` is translated back.
      done_reason: event.doneReason === 'tool_calls' ? 'stop' : event.doneReason,
      total_duration: t.totalNs ?? ms(end - this.started),
      load_duration: t.loadNs ?? 0,
      prompt_eval_count: event.usage?.promptTokens ?? 0,
      prompt_eval_duration: t.promptEvalNs ?? ms(first - this.started),
      eval_count: event.usage?.completionTokens ?? 0,
      eval_duration: t.evalNs ?? ms(end - first),
    };
  }
}

/** A token's log probability as Ollama writes it. */
function logprobOf(t: TokenLogprob): Record<string, unknown> {
  const out: Record<string, unknown> = { token: t.token, logprob: t.logprob };
  if (t.bytes) out.bytes = t.bytes;
  if (t.top) out.top_logprobs = t.top.map((x) => ({ token: x.token, logprob: x.logprob }));
  return out;
}

/** Ollama's answer to a chat or generate with nothing to do: the model is "loaded". */
export function loadAnswer(model: ConfiguredModel, kind: 'chat' | 'generate'): Record<string, unknown> {
  const head = { model: model.name, created_at: new Date().toISOString() };
  const body = kind === 'chat' ? { message: { role: 'assistant', content: '' } } : { response: '' };
  return { ...head, ...body, done: true, done_reason: 'load' };
}

// ---- model listings ----

function digestOf(model: ConfiguredModel): string {
  return createHash('sha256').update(`${model.provider}:${model.upstreamModel}`).digest('hex');
}

function detailsOf(model: ConfiguredModel) {
  return {
    parent_model: '',
    format: model.provider,
    family: model.provider === 'builtin' ? model.upstreamModel : model.provider,
    families: [model.provider],
    parameter_size: '',
    quantization_level: '',
  };
}

export function tagOf(model: ConfiguredModel, modifiedAt: string) {
  return {
    name: model.name,
    model: model.name,
    modified_at: modifiedAt,
    size: 0,
    digest: digestOf(model),
    details: detailsOf(model),
  };
}

const BUILTIN_DESCRIPTIONS: Record<string, string> = {
  'hashed-ngrams':
    'Built-in lexical embedder: hashed word and character n-grams, no weights. Fast; matches words, not meanings.',
  'use-lite':
    'Built-in Universal Sentence Encoder lite (512 dimensions, TF.js on WebAssembly), loaded on first use.',
  extractive:
    'Built-in extractive answerer: it quotes the best-matching passages with their sources. It does not generate text.',
};

export function showOf(model: ConfiguredModel, modifiedAt: string) {
  const description =
    model.provider === 'builtin'
      ? (BUILTIN_DESCRIPTIONS[model.upstreamModel] ?? 'Built-in model')
      : // Never the base URL: it names the operator's internal network (and may carry credentials).
        `${model.upstreamModel} on the ${model.provider} provider`;
  const info: Record<string, unknown> = {
    'general.architecture': model.provider === 'builtin' ? model.upstreamModel : model.provider,
    'general.basename': model.upstreamModel,
    'general.description': description,
    'platform.provider': model.provider,
    'platform.fallbacks': model.fallbacks,
    'platform.context_length': model.contextWindow,
  };
  if (model.dimensions) info['platform.embedding_length'] = model.dimensions;
  const capabilities = model.kind === 'embedding' ? ['embedding'] : ['completion'];
  if (model.kind === 'chat' && model.provider !== 'builtin') capabilities.push('tools');
  return {
    modelfile: `# ${description}\nFROM ${model.upstreamModel}\n`,
    parameters: `num_ctx ${model.contextWindow}`,
    template: '',
    details: detailsOf(model),
    model_info: info,
    capabilities,
    modified_at: modifiedAt,
  };
}
