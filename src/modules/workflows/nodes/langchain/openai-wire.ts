import type { ChatEvent, ChatMessage, ToolCall, ToolSpec } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { EngineDeps } from '../../engine/types.js';
import type { ChatModel } from './ai-parts.js';

/**
 * A chat model on an OpenAI-compatible `/chat/completions` (OpenAI, Groq, Mistral, OpenRouter, Azure, and
 * this platform's own gateway, which charges the key the credential holds). Requests go through the
 * engine's guarded outbound HTTP; the answer is read whole (the engine keeps a node's output, not a stream).
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
    async chat(messages, tools) {
      const body: Record<string, unknown> = {
        model: target.model,
        messages: openAiMessages(messages, target.toolResultNames),
        ...target.body,
        stream: false,
      };
      if (tools?.length) body.tools = tools;
      const res = await deps.http({
        method: 'POST',
        url: target.url,
        headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: target.timeoutMs,
        credentialHeaders: target.credentialHeaders,
      });
      const parsed = parseBody(res.body, target.label);
      if (res.status < 200 || res.status >= 300)
        throw new NodeOperationError(
          `${target.label} refused the request (${res.status}): ${errorText(parsed)}`,
          {
            description: res.body.slice(0, 1000),
          },
        );
      return { model: target.model, events: eventsOf(parsed, target.label) };
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
