import { randomUUID } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { AnthropicBlockT, AnthropicMessagesBodyT, AnthropicMessageT } from './anthropic-schemas.js';
import { estimateTokens } from './builtin/tokens.js';
import { imageTokens } from './image-tokens.js';
import type { ConfiguredModel } from './model-file.js';
import type {
  ChatEvent,
  ChatMessage,
  ChatOptions,
  ChatRequest,
  OpenAiExtras,
  ToolCall,
  ToolSpec,
} from './types.js';

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid body: body.${field} ${message}`, {
    fields: [{ field: `body.${field}`, message }],
  });
}

/** The base64 data of an image block (`source.type: "base64"`); a URL is refused (no open proxy). */
function imageData(block: { source?: AnthropicBlockT['source'] }, field: string): string {
  const source = block.source;
  if (!source) throw invalid(`${field}.source`, 'is required');
  if (source.type !== 'base64')
    throw invalid(`${field}.source.type`, "must be 'base64' (the gateway fetches no URL)");
  if (!source.data) throw invalid(`${field}.source.data`, 'is required');
  return source.data;
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalid(field, 'is required');
  return value;
}

/** A tool result's text (its text blocks joined); images in results are refused, no dialect carries them. */
function resultText(block: AnthropicBlockT, field: string): string {
  const content = block.content;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    content.forEach((part, p) => {
      if (part.type === 'text') texts.push(required(part.text, `${field}.content.${p}.text`));
      else throw invalid(`${field}.content.${p}.type`, `'${part.type}' is not supported in a tool result`);
    });
    text = texts.join('\n');
  }
  return text;
}

/**
 * The neutral messages of one Anthropic message. A user turn's `tool_result` blocks become `tool`
 * messages (before the turn's own text, as Anthropic requires them first).
 */
function messagesFromAnthropic(m: AnthropicMessageT, index: number, toolNames: Map<string, string>) {
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content } satisfies ChatMessage];
  const out: ChatMessage[] = [];
  const main: ChatMessage = { role: m.role, content: '' };
  const texts: string[] = [];
  m.content.forEach((block, b) => {
    const field = `messages.${index}.content.${b}`;
    switch (block.type) {
      case 'text':
        // Citations point into documents the gateway never receives (document blocks are refused).
        if (Array.isArray(block.citations) ? block.citations.length > 0 : block.citations != null)
          throw invalid(`${field}.citations`, 'is not supported by this gateway (no document blocks)');
        texts.push(required(block.text, `${field}.text`));
        return;
      case 'image':
        if (m.role !== 'user') throw invalid(`${field}.type`, 'an image is allowed in user messages only');
        main.images = [...(main.images ?? []), imageData(block, field)];
        return;
      case 'tool_use': {
        if (m.role !== 'assistant')
          throw invalid(`${field}.type`, 'tool_use is allowed in assistant messages only');
        const id = required(block.id, `${field}.id`);
        const name = required(block.name, `${field}.name`);
        toolNames.set(id, name);
        const call: ToolCall = {
          id,
          name,
          arguments: required(block.input, `${field}.input`) as Record<string, unknown>,
        };
        main.toolCalls = [...(main.toolCalls ?? []), call];
        return;
      }
      case 'tool_result': {
        if (m.role !== 'user') throw invalid(`${field}.type`, 'tool_result is allowed in user messages only');
        const id = required(block.tool_use_id, `${field}.tool_use_id`);
        const tool: ChatMessage = { role: 'tool', content: resultText(block, field), toolCallId: id };
        // An Anthropic upstream gets the flag back; the others read it as an `Error: ` prefix.
        if (block.is_error === true) tool.isError = true;
        const name = toolNames.get(id);
        if (name) tool.toolName = name;
        out.push(tool);
        return;
      }
      case 'thinking':
        if (m.role !== 'assistant')
          throw invalid(`${field}.type`, 'thinking is allowed in assistant messages only');
        main.thinking = (main.thinking ?? '') + required(block.thinking, `${field}.thinking`);
        return;
      default:
        throw invalid(`${field}.type`, `'${block.type}' is not supported by this gateway`);
    }
  });
  main.content = texts.join('\n');
  // A user turn of tool results only adds no empty user message after them.
  if (out.length === 0 || main.content !== '' || main.images) out.push(main);
  return out;
}

function systemText(system: AnthropicMessagesBodyT['system']): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system.map((block) => block.text).join('\n');
}

/** The prompt parts of a Messages (or count_tokens) body in the neutral language. */
function promptFromAnthropic(
  body: Pick<AnthropicMessagesBodyT, 'system' | 'messages' | 'tools' | 'tool_choice' | 'thinking'>,
): Omit<ChatRequest, 'model' | 'options'> {
  const messages: ChatMessage[] = [];
  const system = systemText(body.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  const toolNames = new Map<string, string>();
  body.messages.forEach((m, i) => {
    messages.push(...messagesFromAnthropic(m, i, toolNames));
  });
  const out: Omit<ChatRequest, 'model' | 'options'> = { messages };
  const tools: ToolSpec[] = [];
  body.tools?.forEach((tool, i) => {
    // Anthropic's server tools (web search, code execution, …) run at Anthropic: no other model has them.
    if (tool.type !== undefined && tool.type !== 'custom')
      throw invalid(`tools.${i}.type`, `'${tool.type}' is not supported by this gateway (custom tools only)`);
    const parameters = required(tool.input_schema, `tools.${i}.input_schema`) as Record<string, unknown>;
    const fn: ToolSpec['function'] = { name: tool.name, parameters };
    if (tool.description !== undefined) fn.description = tool.description;
    if (tool.strict != null) fn.strict = tool.strict;
    for (const field of HOSTED_TOOL_FIELDS)
      if ((tool as Record<string, unknown>)[field] != null)
        throw invalid(`tools.${i}.${field}`, 'is not supported by this gateway (Anthropic-hosted only)');
    tools.push({ type: 'function', function: fn });
  });
  if (tools.length) out.tools = tools;
  const choice = body.tool_choice;
  if (choice) {
    if (choice.type === 'tool') {
      const name = required(choice.name, 'tool_choice.name');
      if (!tools.some((t) => t.function.name === name))
        throw invalid('tool_choice.name', `names '${name}', which is not in tools`);
      out.toolChoice = { name };
    } else if (choice.type === 'any') {
      if (!tools.length) throw invalid('tool_choice.type', "is 'any' but no tools were sent");
      out.toolChoice = 'required';
    } else out.toolChoice = choice.type;
    if (choice.disable_parallel_tool_use === true) out.openAi = { parallelToolCalls: false };
  }
  const thinking = body.thinking;
  if (thinking?.type === 'enabled') {
    out.think = true;
    out.anthropic = { thinkingBudget: required(thinking.budget_tokens, 'thinking.budget_tokens') };
  } else if (thinking?.type === 'disabled') out.think = false;
  return out;
}

const HOSTED_ONLY = ['container', 'mcp_servers', 'context_management', 'inference_geo'] as const;

/** Every top-level field of a Messages request; another is refused by name, as Anthropic does. */
const MESSAGES_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'stream',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'metadata',
  'service_tier',
  'output_config',
  'output_format',
  'tools',
  'tool_choice',
  'thinking',
  'speed',
  ...HOSTED_ONLY,
]);

/**
 * What `/v1/messages` and `count_tokens` both refuse: fields naming Anthropic-hosted machinery
 * (sandboxes, MCP connectors, regions), which no other provider has, and fields the Messages API
 * does not have, as Anthropic itself answers ("Extra inputs are not permitted").
 */
function refuseUnserved(body: Record<string, unknown>): void {
  for (const field of HOSTED_ONLY)
    if (body[field] != null) throw invalid(field, 'is not supported by this gateway (Anthropic-hosted only)');
  for (const field of Object.keys(body))
    if (!MESSAGES_FIELDS.has(field)) throw invalid(field, 'is not a Messages API field');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Tool fields of Anthropic's tool-search and programmatic-calling betas, which run at Anthropic. */
const HOSTED_TOOL_FIELDS = ['defer_loading', 'allowed_callers', 'input_examples'] as const;

/** The neutral chat of a Messages body. */
export function chatFromAnthropic(body: AnthropicMessagesBodyT): Omit<ChatRequest, 'model'> {
  const prompt = promptFromAnthropic(body);
  const options: ChatOptions = { maxTokens: body.max_tokens };
  if (body.temperature !== undefined) options.temperature = body.temperature;
  if (body.top_p !== undefined) options.topP = body.top_p;
  if (body.top_k !== undefined) options.topK = body.top_k;
  if (body.stop_sequences?.length) options.stop = body.stop_sequences;
  const thinkingBudget = prompt.anthropic?.thinkingBudget;
  if (thinkingBudget !== undefined && thinkingBudget >= body.max_tokens)
    throw invalid('thinking.budget_tokens', 'must be less than max_tokens');
  // Standard capacity only is a promise no other provider can make: refused rather than ignored.
  if (body.service_tier === 'standard_only')
    throw invalid('service_tier', "'standard_only' is not supported by this gateway");
  refuseUnserved(body as Record<string, unknown>);
  // Fast mode is Anthropic-hosted too: refused, not ignored.
  if ((body as { speed?: unknown }).speed === 'fast')
    throw invalid('speed', "'fast' is not supported by this gateway");
  const userKeys = Object.keys(body.metadata ?? {}).filter((k) => k !== 'user_id');
  if (userKeys[0] !== undefined)
    throw invalid(`metadata.${userKeys[0]}`, 'is not a Messages API field (metadata takes user_id only)');
  const output = body.output_config;
  // `output_format` is the structured-outputs beta's name for output_config.format.
  const legacyFormat = (body as { output_format?: { type?: unknown; schema?: unknown } | null })
    .output_format;
  if (legacyFormat != null) {
    if (output?.format) throw invalid('output_format', 'and output_config.format cannot both be set');
    if (legacyFormat.type !== 'json_schema' || !isObject(legacyFormat.schema))
      throw invalid('output_format', "must be {type: 'json_schema', schema: {…}}");
    prompt.format = legacyFormat.schema;
  }
  if (output?.format) prompt.format = output.format.schema as Record<string, unknown>;
  const effort = output?.effort;
  if (effort === 'xhigh' || effort === 'max')
    throw invalid(
      'output_config.effort',
      `'${effort}' is not supported by this gateway (low, medium or high)`,
    );
  if (effort != null) prompt.openAi = { ...prompt.openAi, reasoningEffort: effort };
  const userId = body.metadata?.user_id;
  if (userId != null) {
    const extras: OpenAiExtras = { ...prompt.openAi, user: userId };
    prompt.openAi = extras;
  }
  return { ...prompt, options };
}

/**
 * `count_tokens`: the estimate the gateway makes for every model (about four characters a token),
 * over the system prompt, the messages, the tool calls and the tool definitions, and Anthropic's
 * own estimate for images (image-tokens.ts). The body is refused as `/v1/messages` refuses it.
 */
export function countTokens(body: Parameters<typeof promptFromAnthropic>[0]): number {
  refuseUnserved(body as Record<string, unknown>);
  const prompt = promptFromAnthropic(body);
  let tokens = 0;
  for (const m of prompt.messages) {
    tokens += estimateTokens(m.content) + 3;
    for (const image of m.images ?? []) tokens += imageTokens(image);
    if (m.toolCalls) tokens += estimateTokens(JSON.stringify(m.toolCalls));
    if (m.thinking) tokens += estimateTokens(m.thinking);
  }
  if (prompt.tools) tokens += estimateTokens(JSON.stringify(prompt.tools));
  return Math.max(1, tokens);
}

const STOP: Record<string, string> = { length: 'max_tokens', tool_calls: 'tool_use' };

/** A tool call's id for Anthropic clients: the upstream's, or one made up (Ollama sends none). */
const toolUseId = (call: ToolCall) => call.id ?? `toolu_${randomUUID().replaceAll('-', '')}`;

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** Anthropic's `message` object and its stream events, from neutral events. */
export class AnthropicWriter {
  readonly id = `msg_${randomUUID().replaceAll('-', '')}`;
  private readonly blocks: Block[] = [];
  /** The kind of the block a stream has open (text and thinking grow until another kind starts). */
  private open: 'text' | 'thinking' | null = null;
  private index = -1;
  private toolUsed = false;

  constructor(private readonly model: ConfiguredModel) {}

  private message(content: Block[], stopReason: string | null, usage: { input: number; output: number }) {
    return {
      id: this.id,
      type: 'message' as const,
      role: 'assistant' as const,
      model: this.model.name,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    };
  }

  private stopReason(event: Extract<ChatEvent, { type: 'done' }>): string {
    return this.toolUsed ? 'tool_use' : (STOP[event.doneReason] ?? 'end_turn');
  }

  /** The events that open a stream (the counts come in `message_delta`, once the upstream sent them). */
  start(): string[] {
    return [
      sse('message_start', {
        type: 'message_start',
        message: this.message([], null, { input: 0, output: 0 }),
      }),
      sse('ping', { type: 'ping' }),
    ];
  }

  private closeOpen(out: string[]): void {
    if (this.open === null) return;
    out.push(sse('content_block_stop', { type: 'content_block_stop', index: this.index }));
    this.open = null;
  }

  private grow(out: string[], kind: 'text' | 'thinking', piece: string): void {
    if (this.open !== kind) {
      this.closeOpen(out);
      this.index++;
      this.open = kind;
      const block =
        kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      out.push(
        sse('content_block_start', { type: 'content_block_start', index: this.index, content_block: block }),
      );
    }
    const delta =
      kind === 'text' ? { type: 'text_delta', text: piece } : { type: 'thinking_delta', thinking: piece };
    out.push(sse('content_block_delta', { type: 'content_block_delta', index: this.index, delta }));
  }

  /** The SSE events for one neutral event. */
  events(event: ChatEvent): string[] {
    const out: string[] = [];
    if (event.type === 'delta') {
      if (event.thinking) this.grow(out, 'thinking', event.thinking);
      if (event.content) this.grow(out, 'text', event.content);
      for (const call of event.toolCalls ?? []) {
        this.closeOpen(out);
        this.toolUsed = true;
        this.index++;
        const block = { type: 'tool_use', id: toolUseId(call), name: call.name, input: {} };
        out.push(
          sse('content_block_start', {
            type: 'content_block_start',
            index: this.index,
            content_block: block,
          }),
        );
        const delta = { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) };
        out.push(sse('content_block_delta', { type: 'content_block_delta', index: this.index, delta }));
        out.push(sse('content_block_stop', { type: 'content_block_stop', index: this.index }));
      }
      return out;
    }
    this.closeOpen(out);
    const usage = {
      input_tokens: event.usage?.promptTokens ?? 0,
      output_tokens: event.usage?.completionTokens ?? 0,
    };
    out.push(
      sse('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: this.stopReason(event), stop_sequence: null },
        usage,
      }),
    );
    out.push(sse('message_stop', { type: 'message_stop' }));
    return out;
  }

  /** Adds an event to a `stream: false` answer; returns the message at `done`. */
  collect(event: ChatEvent): Record<string, unknown> | null {
    if (event.type === 'delta') {
      const last = this.blocks.at(-1);
      if (event.thinking) {
        if (last?.type === 'thinking') last.thinking += event.thinking;
        else this.blocks.push({ type: 'thinking', thinking: event.thinking, signature: '' });
      }
      if (event.content) {
        const tail = this.blocks.at(-1);
        if (tail?.type === 'text') tail.text += event.content;
        else this.blocks.push({ type: 'text', text: event.content });
      }
      for (const call of event.toolCalls ?? []) {
        this.toolUsed = true;
        this.blocks.push({ type: 'tool_use', id: toolUseId(call), name: call.name, input: call.arguments });
      }
      return null;
    }
    return this.message(this.blocks, this.stopReason(event), {
      input: event.usage?.promptTokens ?? 0,
      output: event.usage?.completionTokens ?? 0,
    });
  }
}

/** One server-sent event as Anthropic frames them: the event name, then its JSON. */
export function sse(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
