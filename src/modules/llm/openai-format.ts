import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { ConfiguredModel } from './model-file.js';
import type { OpenAiChatBodyT, OpenAiMessageT } from './openai-schemas.js';
import type {
  ChatEvent,
  ChatMessage,
  ChatOptions,
  ChatRequest,
  OpenAiExtras,
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
      if (part.type === 'text') texts.push(part.text ?? '');
      else if (part.type === 'image_url') {
        const url = part.image_url?.url ?? '';
        // Only inline images: fetching a caller's URL from here would be an open proxy.
        if (!DATA_URL.test(url))
          throw invalid(`messages.${index}.content.${p}.image_url.url`, 'must be a base64 data: URL');
        out.images = [...(out.images ?? []), url.replace(DATA_URL, '')];
      } else throw invalid(`messages.${index}.content.${p}.type`, `'${part.type}' is not supported`);
    });
    out.content = texts.join('\n');
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
    if (name) m.toolName = name;
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
  // Log probabilities would have to travel back through every event: refused rather than answered null.
  if (body.logprobs === true) throw invalid('logprobs', 'is not supported by this gateway');
  if (body.top_logprobs != null && body.top_logprobs > 0)
    throw invalid('top_logprobs', 'is not supported by this gateway');
  if (body.stop != null) options.stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.seed != null) options.seed = body.seed;
  if (body.presence_penalty != null) options.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) options.frequencyPenalty = body.frequency_penalty;
  const out: Omit<ChatRequest, 'model'> = { messages, options };
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

const FINISH: Record<string, string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls' };

/** OpenAI's `chat.completion` and `chat.completion.chunk` objects from neutral events. */
export class OpenAiWriter {
  // randomUUID draws from a pooled buffer; randomBytes per answer was a syscall each.
  readonly id = `chatcmpl-${randomUUID()}`;
  private readonly created = Math.floor(Date.now() / 1000);
  private content = '';
  private readonly toolCalls: ToolCall[] = [];
  private sentRole = false;
  private toolIndex = 0;

  constructor(private readonly model: ConfiguredModel) {}

  private head(object: 'chat.completion' | 'chat.completion.chunk') {
    return { id: this.id, object, created: this.created, model: this.model.name, system_fingerprint: null };
  }

  private static wireCalls(calls: readonly ToolCall[], firstIndex: number) {
    return calls.map((c, i) => ({
      index: firstIndex + i,
      id: c.id ?? `call_${randomBytes(9).toString('base64url')}`,
      type: 'function' as const,
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }

  /** The chunks for one event: a delta, or the finishing chunk (and a usage chunk when asked). */
  chunks(event: ChatEvent, includeUsage: boolean): Record<string, unknown>[] {
    if (event.type === 'delta') {
      const delta: Record<string, unknown> = {};
      if (!this.sentRole) {
        delta.role = 'assistant';
        this.sentRole = true;
      }
      if (event.content !== undefined || !event.toolCalls) delta.content = event.content ?? '';
      if (event.toolCalls?.length) {
        delta.tool_calls = OpenAiWriter.wireCalls(event.toolCalls, this.toolIndex);
        this.toolIndex += event.toolCalls.length;
      }
      return [
        {
          ...this.head('chat.completion.chunk'),
          choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
        },
      ];
    }
    const finish = this.toolIndex > 0 ? 'tool_calls' : (FINISH[event.doneReason] ?? 'stop');
    const out: Record<string, unknown>[] = [
      {
        ...this.head('chat.completion.chunk'),
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }],
      },
    ];
    if (includeUsage) out.push({ ...this.head('chat.completion.chunk'), choices: [], usage: usageOf(event) });
    return out;
  }

  /** Adds an event to a `stream:false` answer; returns the completion at `done`. */
  collect(event: ChatEvent): Record<string, unknown> | null {
    if (event.type === 'delta') {
      this.content += event.content ?? '';
      if (event.toolCalls) this.toolCalls.push(...event.toolCalls);
      return null;
    }
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: this.toolCalls.length > 0 && this.content === '' ? null : this.content,
      refusal: null,
    };
    if (this.toolCalls.length > 0) message.tool_calls = OpenAiWriter.wireCalls(this.toolCalls, 0);
    const finish = this.toolCalls.length > 0 ? 'tool_calls' : (FINISH[event.doneReason] ?? 'stop');
    return {
      ...this.head('chat.completion'),
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: usageOf(event),
    };
  }
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
