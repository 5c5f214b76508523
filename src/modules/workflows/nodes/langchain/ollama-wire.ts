import type { OutboundResponse } from '../../../../core/http/outbound.js';
import type { ChatEvent, ChatMessage } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { EngineDeps } from '../../engine/types.js';
import type { ChatModel } from './ai-parts.js';
import {
  answerEvents,
  errorText,
  MAX_TOOL_CALLS,
  parseBody,
  safeParse,
  type WireToolCall,
  wireToolCall,
} from './openai-wire.js';
import { type LineReader, streamedEvents, usageOf } from './stream-wire.js';

/**
 * A chat model on Ollama's native `POST /api/chat` (`stream: false`, or its JSON lines when the caller
 * streams): tool calls arrive with object arguments and no ids (ids are made up so the loop can pair
 * results), results go back as `tool` turns with the tool's name. Ollama also runs in front of this
 * platform: its Ollama surface speaks the same.
 */

export interface OllamaTarget {
  base: string;
  headers: Record<string, string>;
  model: string;
  /** Ollama's `options` (temperature, num_ctx…), and top-level fields (`keep_alive`, `format`). */
  options: Record<string, unknown>;
  top: Record<string, unknown>;
  timeoutMs: number;
}

const LABEL = 'Ollama';

export function ollamaModel(deps: EngineDeps, target: OllamaTarget): ChatModel {
  let ids = 0;
  const newId = () => `call_${++ids}`;
  return {
    kind: 'chatModel',
    name: target.model,
    async chat(messages, tools, options) {
      const stream = options?.stream === true;
      const body: Record<string, unknown> = {
        model: target.model,
        messages: ollamaMessages(messages),
        stream,
        ...target.top,
      };
      if (Object.keys(target.options).length > 0) body.options = target.options;
      if (tools?.length) body.tools = tools;
      const send = (onData?: (chunk: Buffer) => void) =>
        deps.http({
          method: 'POST',
          url: `${target.base}/api/chat`,
          headers: {
            ...target.headers,
            'content-type': 'application/json',
            accept: stream ? 'application/x-ndjson' : 'application/json',
          },
          body: JSON.stringify(body),
          timeoutMs: target.timeoutMs,
          credentialHeaders: Object.keys(target.headers),
          ...(onData ? { onData } : {}),
        });
      const whole = (res: OutboundResponse) => answerOf(res, newId);
      if (stream)
        return { model: target.model, events: await streamedEvents(send, ollamaReader(newId), whole) };
      return { model: target.model, events: whole(await send()) };
    },
  };
}

/** The body of a refusal as the node's error with Ollama's message. */
function refused(res: OutboundResponse): NodeOperationError {
  return new NodeOperationError(
    `${LABEL} refused the request (${res.status}): ${errorText(parseBody(res.body, LABEL))}`,
    { description: res.body.slice(0, 1000) },
  );
}

function callsOf(raw: unknown, newId: () => string): WireToolCall[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > MAX_TOOL_CALLS)
    throw new NodeOperationError(`${LABEL} answered with malformed tool calls`);
  return raw.map((c: { function?: { name?: unknown; arguments?: unknown } } | null) =>
    wireToolCall(newId(), c?.function?.name, c?.function?.arguments, LABEL),
  );
}

/** A whole `/api/chat` answer (`stream: false`); a refusal throws. */
function answerOf(res: OutboundResponse, newId: () => string): AsyncIterable<ChatEvent> {
  if (res.status < 200 || res.status >= 300) throw refused(res);
  const parsed = parseBody(res.body, LABEL) as OllamaAnswer;
  if (typeof (parsed as { error?: unknown })?.error === 'string' && !parsed.message)
    throw new NodeOperationError(`${LABEL} failed: ${errorText(parsed).slice(0, 1000)}`);
  const message = parsed?.message;
  if (!message || typeof message !== 'object')
    throw new NodeOperationError(`${LABEL} answered without a message`);
  const calls = callsOf(message.tool_calls, newId);
  return answerEvents(
    typeof message.content === 'string' ? message.content : '',
    calls,
    calls.length > 0 ? 'tool_calls' : (parsed.done_reason ?? 'stop'),
    { prompt: parsed.prompt_eval_count, completion: parsed.eval_count },
  );
}

/**
 * Ollama's streamed `/api/chat`: one JSON object a line, each a piece of the message (`content` passed
 * on at once; `tool_calls` come whole in a piece), the last with `done: true`, the stop reason and the
 * token counts. An `{error}` line fails the call with Ollama's message. A whole answer (one line, `done`)
 * reads the same.
 */
function ollamaReader(newId: () => string): LineReader {
  const calls: WireToolCall[] = [];
  let seen = false;
  let reason = 'stop';
  let prompt: unknown;
  let completion: unknown;
  return {
    line(line, text) {
      if (line.trim() === '') return;
      const piece = safeParse(line) as (OllamaAnswer & { done?: unknown; error?: unknown }) | undefined;
      if (!piece || typeof piece !== 'object' || Array.isArray(piece)) return;
      if (piece.error !== undefined && !piece.message)
        throw new NodeOperationError(`${LABEL} failed while answering: ${errorText(piece).slice(0, 1000)}`);
      seen = true;
      const message = piece.message;
      if (message && typeof message === 'object') {
        if (typeof message.content === 'string') text(message.content);
        const more = callsOf(message.tool_calls, newId);
        if (calls.length + more.length > MAX_TOOL_CALLS)
          throw new NodeOperationError(`${LABEL} answered with malformed tool calls`);
        calls.push(...more);
      }
      if (piece.done === true) {
        if (typeof piece.done_reason === 'string') reason = piece.done_reason;
        prompt = piece.prompt_eval_count;
        completion = piece.eval_count;
      }
    },
    seen: () => seen,
    end: () => ({
      calls,
      doneReason: calls.length > 0 ? 'tool_calls' : reason,
      usage: usageOf(prompt, completion),
    }),
  };
}

interface OllamaAnswer {
  message?: {
    content?: unknown;
    tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
  };
  done_reason?: string;
  prompt_eval_count?: unknown;
  eval_count?: unknown;
}

export function ollamaMessages(messages: ChatMessage[]): Record<string, unknown>[] {
  return messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.role === 'tool' && m.toolName) out.tool_name = m.toolName;
    if (m.toolCalls?.length)
      out.tool_calls = m.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }));
    if (m.images?.length) out.images = m.images.map((i) => i.replace(/^data:[^;]+;base64,/, ''));
    return out;
  });
}
