import type { OutboundResponse } from '../../../../core/http/outbound.js';
import type { ChatEvent, ChatMessage, ToolCall, ToolSpec } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { EngineDeps } from '../../engine/types.js';
import type { ChatModel } from './ai-parts.js';
import { type LineReader, sseData, streamedEvents, usageOf } from './stream-wire.js';

/**
 * A chat model on an OpenAI-compatible `/chat/completions` (OpenAI, Groq, Mistral, OpenRouter, Azure, and
 * this platform's own gateway, which charges the key the credential holds). Requests go through the
 * engine's guarded outbound HTTP; the answer is read whole, or, when the caller streams (an agent whose
 * chat answers as a stream), as OpenAI's server-sent events, its text passed on as it arrives.
 */

export interface OpenAiWireTarget {
  /** Provider label for messages (`OpenAI`, `Groq`…). */
  label: string;
  /** The full URL of the chat completions endpoint. */
  url: string;
  headers: Record<string, string>;
  /** Header names holding the credential (dropped on a cross-origin redirect). */
  credentialHeaders: string[];
  model: string;
  /** Sampling and other body fields, in OpenAI's names (`temperature`, `max_tokens`…). */
  body: Record<string, unknown>;
  timeoutMs: number;
  /** Tool results carry the tool's `name` too (Mistral's chat API reads it). */
  toolResultNames?: boolean;
}

/** A tool call whose arguments were not a JSON object: kept so the loop can tell the model. */
export type WireToolCall = ToolCall & { malformed?: string };

export const MAX_TOOL_CALLS = 64;

export function openAiWireModel(deps: EngineDeps, target: OpenAiWireTarget): ChatModel {
  return {
    kind: 'chatModel',
    name: target.model,
    async chat(messages, tools, options) {
      const stream = options?.stream === true;
      const body: Record<string, unknown> = {
        model: target.model,
        messages: openAiMessages(messages, target.toolResultNames),
        ...target.body,
        stream,
      };
      if (stream) body.stream_options = { include_usage: true };
      if (tools?.length) body.tools = tools;
      const send = (onData?: (chunk: Buffer) => void) =>
        deps.http({
          method: 'POST',
          url: target.url,
          headers: {
            ...target.headers,
            'content-type': 'application/json',
            accept: stream ? 'text/event-stream' : 'application/json',
          },
          body: JSON.stringify(body),
          timeoutMs: target.timeoutMs,
          credentialHeaders: target.credentialHeaders,
          ...(onData ? { onData } : {}),
        });
      const whole = (res: OutboundResponse) => eventsOf(checked(res, target.label), target.label);
      if (stream)
        return { model: target.model, events: await streamedEvents(send, openAiReader(target.label), whole) };
      return { model: target.model, events: whole(await send()) };
    },
  };
}

/** The parsed body of a 2xx answer; a refusal is the node's error with the provider's message. */
function checked(res: OutboundResponse, label: string): unknown {
  const parsed = parseBody(res.body, label);
  if (res.status < 200 || res.status >= 300)
    throw new NodeOperationError(`${label} refused the request (${res.status}): ${errorText(parsed)}`, {
      description: res.body.slice(0, 1000),
    });
  return parsed;
}

interface StreamDelta {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/**
 * OpenAI's server-sent events (`stream: true`): each text delta passed on at once; tool calls are put
 * together from their pieces (by `index`) and given at the end, with the usage of the last event
 * (`include_usage`).
 */
function openAiReader(label: string): LineReader {
  const calls = new Map<number, { id?: string; name: string; arguments: string }>();
  let seen = false;
  let finish = 'stop';
  let usage: StreamDelta['usage'] = null;
  return {
    line(text, emit) {
      const sse = sseData(text);
      if (!sse) return;
      seen = true;
      const event = sse.data as (StreamDelta & { error?: unknown }) | undefined;
      if (!event || typeof event !== 'object') return;
      // An error event mid-stream (OpenRouter and others send one with a 200).
      if (event.error)
        throw new NodeOperationError(`${label} failed while answering: ${errorText(event).slice(0, 1000)}`);
      if (event.usage) usage = event.usage;
      const choice = Array.isArray(event.choices) ? event.choices[0] : undefined;
      if (!choice) return;
      if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
      const content = choice.delta?.content;
      if (typeof content === 'string') emit(content);
      const pieces = choice.delta?.tool_calls;
      for (const piece of Array.isArray(pieces) ? pieces : []) {
        const index = typeof piece.index === 'number' ? piece.index : calls.size;
        const call = calls.get(index) ?? { name: '', arguments: '' };
        if (!calls.has(index)) {
          if (calls.size >= MAX_TOOL_CALLS)
            throw new NodeOperationError(`${label} answered with malformed tool calls`);
          calls.set(index, call);
        }
        if (typeof piece.id === 'string') call.id = piece.id;
        if (typeof piece.function?.name === 'string') call.name += piece.function.name;
        if (typeof piece.function?.arguments === 'string') call.arguments += piece.function.arguments;
      }
    },
    seen: () => seen,
    end() {
      const wire = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => toolCallOf({ ...(c.id ? { id: c.id } : {}), function: c }, label));
      const used = usage as StreamDelta['usage'];
      return {
        calls: wire,
        doneReason: finish,
        usage: usageOf(used?.prompt_tokens, used?.completion_tokens),
      };
    },
  };
}

export function parseBody(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: `${label} answered with a body that is not JSON` } };
  }
}

export function errorText(body: unknown): string {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string')
    return (error as { message: string }).message;
  // Mistral (and other compatible servers) answer `{"message": "…"}` without an `error` object.
  const message = (body as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  return 'no error message';
}

interface Completion {
  choices?: Array<{
    message?: {
      content?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: unknown } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** A whole completion as the loop's events. */
function eventsOf(body: unknown, label: string): AsyncIterable<ChatEvent> {
  const completion = body as Completion;
  const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  if (!choice?.message) throw new NodeOperationError(`${label} answered without a message`);
  const events: ChatEvent[] = [];
  const content = choice.message.content;
  if (typeof content === 'string' && content !== '') events.push({ type: 'delta', content });
  const calls = choice.message.tool_calls ?? [];
  if (!Array.isArray(calls) || calls.length > MAX_TOOL_CALLS)
    throw new NodeOperationError(`${label} answered with malformed tool calls`);
  if (calls.length > 0) events.push({ type: 'delta', toolCalls: calls.map((c) => toolCallOf(c, label)) });
  const usage = completion.usage;
  events.push({
    type: 'done',
    doneReason: choice.finish_reason ?? 'stop',
    usage:
      usage && (typeof usage.prompt_tokens === 'number' || typeof usage.completion_tokens === 'number')
        ? {
            promptTokens: usage.prompt_tokens ?? 0,
            completionTokens: usage.completion_tokens ?? 0,
            estimated: false,
          }
        : null,
  });
  return (async function* () {
    yield* events;
  })();
}

function toolCallOf(
  call: { id?: string; function?: { name?: string; arguments?: unknown } },
  label: string,
): WireToolCall {
  const name = call.function?.name;
  if (typeof name !== 'string' || name === '')
    throw new NodeOperationError(`${label} answered with a tool call without a name`);
  const raw = call.function?.arguments;
  const out: WireToolCall = { name, arguments: {} };
  if (typeof call.id === 'string') out.id = call.id;
  const args = typeof raw === 'string' ? safeParse(raw.trim() === '' ? '{}' : raw) : raw;
  if (args && typeof args === 'object' && !Array.isArray(args))
    out.arguments = args as Record<string, unknown>;
  else out.malformed = String(typeof raw === 'string' ? raw : JSON.stringify(raw)).slice(0, 500);
  return out;
}

export function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The platform's messages in OpenAI's chat shape. */
export function openAiMessages(messages: ChatMessage[], toolResultNames = false): Record<string, unknown>[] {
  return messages.map((m) => {
    if (m.role === 'tool')
      return {
        role: 'tool',
        tool_call_id: m.toolCallId ?? '',
        ...(toolResultNames && m.toolName ? { name: m.toolName } : {}),
        content: m.content,
      };
    if (m.role === 'assistant' && m.toolCalls?.length)
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      };
    if (m.images?.length)
      return {
        role: m.role,
        content: [
          ...(m.content ? [{ type: 'text', text: m.content }] : []),
          ...m.images.map((url) => ({ type: 'image_url', image_url: { url } })),
        ],
      };
    return { role: m.role, content: m.content };
  });
}

export type { ToolSpec };

/** One whole answer as the loop's events: its text, its tool calls, why it stopped and its tokens. */
export function answerEvents(
  content: string,
  calls: WireToolCall[],
  doneReason: string,
  tokens: { prompt?: unknown; completion?: unknown },
): AsyncIterable<ChatEvent> {
  const events: ChatEvent[] = [];
  if (content !== '') events.push({ type: 'delta', content });
  if (calls.length > 0) events.push({ type: 'delta', toolCalls: calls });
  const counted = typeof tokens.prompt === 'number' || typeof tokens.completion === 'number';
  events.push({
    type: 'done',
    doneReason,
    usage: counted
      ? {
          promptTokens: typeof tokens.prompt === 'number' ? tokens.prompt : 0,
          completionTokens: typeof tokens.completion === 'number' ? tokens.completion : 0,
          estimated: false,
        }
      : null,
  });
  return (async function* () {
    yield* events;
  })();
}

/** A tool call's arguments as an object, or the call marked malformed (the model is told). */
export function wireToolCall(
  id: string | undefined,
  name: unknown,
  raw: unknown,
  label: string,
): WireToolCall {
  if (typeof name !== 'string' || name === '')
    throw new NodeOperationError(`${label} answered with a tool call without a name`);
  const out: WireToolCall = { name, arguments: {} };
  if (id !== undefined) out.id = id;
  const args = typeof raw === 'string' ? safeParse(raw.trim() === '' ? '{}' : raw) : raw;
  if (args && typeof args === 'object' && !Array.isArray(args))
    out.arguments = args as Record<string, unknown>;
  else out.malformed = String(typeof raw === 'string' ? raw : JSON.stringify(raw)).slice(0, 500);
  return out;
}
