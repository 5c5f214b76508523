import type { OutboundResponse } from '../../../../core/http/outbound.js';
import type { ChatEvent, ChatMessage, ToolSpec } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { EngineDeps } from '../../engine/types.js';
import type { ChatModel } from './ai-parts.js';
import {
  answerEvents,
  errorText,
  MAX_TOOL_CALLS,
  parseBody,
  type WireToolCall,
  wireToolCall,
} from './openai-wire.js';
import { type LineReader, sseData, streamedEvents, usageOf } from './stream-wire.js';

/**
 * A chat model on Anthropic's Messages API (`POST /v1/messages`): the system message apart, tool calls as
 * `tool_use` blocks and their results as `tool_result` blocks of a user turn. Through the engine's guarded
 * outbound HTTP: the answer read whole, or, when the caller streams, as Anthropic's server-sent events.
 */

export interface AnthropicTarget {
  /** The API's base (`https://api.anthropic.com`), without `/v1`. */
  base: string;
  apiKey: string;
  model: string;
  body: Record<string, unknown>;
  timeoutMs: number;
}

const LABEL = 'Anthropic';

export function anthropicModel(deps: EngineDeps, target: AnthropicTarget): ChatModel {
  return {
    kind: 'chatModel',
    name: target.model,
    async chat(messages, tools, options) {
      const stream = options?.stream === true;
      const system = messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const body: Record<string, unknown> = {
        model: target.model,
        max_tokens: 4096,
        ...target.body,
        messages: anthropicMessages(messages.filter((m) => m.role !== 'system')),
      };
      if (system !== '') body.system = system;
      if (tools?.length) body.tools = tools.map(anthropicTool);
      if (stream) body.stream = true;
      const send = (onData?: (chunk: Buffer) => void) =>
        deps.http({
          method: 'POST',
          url: `${target.base}/v1/messages`,
          headers: {
            'x-api-key': target.apiKey,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
            accept: stream ? 'text/event-stream' : 'application/json',
          },
          body: JSON.stringify(body),
          timeoutMs: target.timeoutMs,
          credentialHeaders: ['x-api-key'],
          ...(onData ? { onData } : {}),
        });
      if (stream)
        return { model: target.model, events: await streamedEvents(send, anthropicReader(), answerOf) };
      return { model: target.model, events: answerOf(await send()) };
    },
  };
}

/** Anthropic's stop reasons in the loop's words (`tool_use` is OpenAI's `tool_calls`). */
const stopReason = (reason: unknown) =>
  reason === 'tool_use' ? 'tool_calls' : typeof reason === 'string' ? reason : 'stop';

/** A whole Messages answer (`stream` off, or an upstream answering JSON anyway); a refusal throws. */
function answerOf(res: OutboundResponse): AsyncIterable<ChatEvent> {
  const parsed = parseBody(res.body, LABEL) as AnthropicAnswer;
  if (res.status < 200 || res.status >= 300)
    throw new NodeOperationError(`${LABEL} refused the request (${res.status}): ${errorText(parsed)}`, {
      description: res.body.slice(0, 1000),
    });
  if (!Array.isArray(parsed?.content)) throw new NodeOperationError(`${LABEL} answered without content`);
  let text = '';
  const calls: WireToolCall[] = [];
  for (const block of parsed.content) {
    if (block?.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block?.type === 'tool_use')
      calls.push(
        wireToolCall(typeof block.id === 'string' ? block.id : undefined, block.name, block.input, LABEL),
      );
  }
  if (calls.length > MAX_TOOL_CALLS)
    throw new NodeOperationError(`${LABEL} answered with too many tool calls`);
  return answerEvents(text, calls, stopReason(parsed.stop_reason), {
    prompt: parsed.usage?.input_tokens,
    completion: parsed.usage?.output_tokens,
  });
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: { input_tokens?: unknown; output_tokens?: unknown } };
  content_block?: { type?: string; id?: unknown; name?: unknown; text?: unknown; input?: unknown };
  delta?: { type?: string; text?: unknown; partial_json?: unknown; stop_reason?: unknown };
  usage?: { input_tokens?: unknown; output_tokens?: unknown };
  error?: { message?: unknown };
}

/**
 * Anthropic's Messages stream (`stream: true`): `message_start` (the prompt's tokens), per content
 * block a `content_block_start`, its deltas (`text_delta` text passed on at once, `input_json_delta`
 * pieces of a `tool_use` block's arguments) and a stop, then `message_delta` (stop reason, output
 * tokens so far) and `message_stop`. An `error` event mid-stream fails the call with its message.
 */
function anthropicReader(): LineReader {
  const blocks = new Map<number, { id?: string; name: unknown; json: string; input: unknown }>();
  let seen = false;
  let stop: unknown = null;
  let prompt: unknown;
  let completion: unknown;
  return {
    line(line, text) {
      if (line.startsWith('event:')) seen = true;
      const sse = sseData(line);
      if (!sse) return;
      seen = true;
      const event = sse.data as StreamEvent | undefined;
      if (!event || typeof event !== 'object') return;
      switch (event.type) {
        case 'message_start':
          prompt = event.message?.usage?.input_tokens;
          completion = event.message?.usage?.output_tokens;
          return;
        case 'content_block_start': {
          const block = event.content_block;
          if (block?.type === 'text' && typeof block.text === 'string') text(block.text);
          else if (block?.type === 'tool_use' && typeof event.index === 'number') {
            if (blocks.size >= MAX_TOOL_CALLS)
              throw new NodeOperationError(`${LABEL} answered with too many tool calls`);
            blocks.set(event.index, {
              ...(typeof block.id === 'string' ? { id: block.id } : {}),
              name: block.name,
              json: '',
              input: block.input,
            });
          }
          return;
        }
        case 'content_block_delta': {
          const delta = event.delta;
          if (delta?.type === 'text_delta' && typeof delta.text === 'string') text(delta.text);
          else if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            const block = typeof event.index === 'number' ? blocks.get(event.index) : undefined;
            if (block) block.json += delta.partial_json;
          }
          return;
        }
        case 'message_delta':
          if (event.delta?.stop_reason !== undefined) stop = event.delta.stop_reason;
          if (event.usage?.input_tokens !== undefined) prompt = event.usage.input_tokens;
          if (event.usage?.output_tokens !== undefined) completion = event.usage.output_tokens;
          return;
        case 'error':
          throw new NodeOperationError(
            `${LABEL} failed while answering: ${typeof event.error?.message === 'string' ? event.error.message.slice(0, 1000) : 'no error message'}`,
          );
        default:
          return;
      }
    },
    seen: () => seen,
    end() {
      const calls = [...blocks.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, b]) =>
          // A block whose arguments came whole in its start (no deltas) keeps them.
          wireToolCall(b.id, b.name, b.json === '' ? (b.input ?? {}) : b.json, LABEL),
        );
      return { calls, doneReason: stopReason(stop), usage: usageOf(prompt, completion) };
    },
  };
}

interface AnthropicAnswer {
  content?: Array<{ type?: string; text?: unknown; id?: unknown; name?: unknown; input?: unknown }>;
  stop_reason?: string | null;
  usage?: { input_tokens?: unknown; output_tokens?: unknown };
}

function anthropicTool(spec: ToolSpec): Record<string, unknown> {
  return {
    name: spec.function.name,
    description: spec.function.description ?? '',
    input_schema: spec.function.parameters ?? { type: 'object', properties: {} },
  };
}

/** The platform's turns in Anthropic's shape: tool results join one user turn, as the API requires. */
export function anthropicMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  const out: Array<{ role: string; content: unknown }> = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      const block = {
        type: 'tool_result',
        tool_use_id: m.toolCallId ?? '',
        content: m.content,
        ...(m.isError ? { is_error: true } : {}),
      };
      const last = out.at(-1);
      if (last?.role === 'user' && Array.isArray(last.content)) (last.content as unknown[]).push(block);
      else out.push({ role: 'user', content: [block] });
      continue;
    }
    if (m.role === 'assistant' && m.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text', text: m.content }] : []),
          ...m.toolCalls.map((c) => ({ type: 'tool_use', id: c.id ?? '', name: c.name, input: c.arguments })),
        ],
      });
      continue;
    }
    if (m.images?.length) {
      out.push({
        role: m.role,
        content: [
          ...m.images.map((data) => imageBlock(data)),
          ...(m.content ? [{ type: 'text', text: m.content }] : []),
        ],
      });
      continue;
    }
    out.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content: m.content });
  }
  return out;
}

function imageBlock(data: string): Record<string, unknown> {
  const match = /^data:([^;]+);base64,(.*)$/s.exec(data);
  return {
    type: 'image',
    source: { type: 'base64', media_type: match?.[1] ?? 'image/png', data: match?.[2] ?? data },
  };
}
