import { Type } from 'typebox';
import type { ChatMessage } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { Item, Json } from '../../engine/types.js';
import type { MemoryMessage } from './ai-parts.js';

/** The session parameters n8n's chat memories share. */
export const SessionParameters = {
  sessionIdType: Type.Enum(['fromInput', 'customKey'] as const, { default: 'fromInput' }),
  sessionKey: Type.String({ default: 'chat_history', maxLength: 1_000 }),
  /** n8n sets no maximum (templates use 200); bounded here, and by each memory's own store. */
  contextWindowLength: Type.Integer({ minimum: 1, maximum: 1_000, default: 5 }),
};

/** Longest message a memory stores (characters); longer ones are cut. */
export const MAX_STORED_MESSAGE_CHARS = 1_000_000;

/** Whether the session id comes from the input (v1.2+, `fromInput`) rather than the node's own key. */
export function sessionFromInput(version: number | undefined, p: { sessionIdType: string }): boolean {
  return version !== undefined && version >= 1.2 && p.sessionIdType === 'fromInput';
}

/**
 * The session id for the root's item: from v1.2 and `fromInput`, the item's `sessionId` (as the Chat
 * Trigger sends it); else the node's `sessionKey`.
 */
export function sessionIdOf(
  version: number | undefined,
  p: { sessionIdType: string; sessionKey: string },
  item: Item | undefined,
): string {
  const fromInput = sessionFromInput(version, p);
  const raw = fromInput ? inputSessionId(item) : p.sessionKey;
  const id = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
  if (id === '')
    throw new NodeOperationError('No session ID found', {
      description: fromInput
        ? "Expected the input's 'sessionId' field (as the Chat Trigger sends it), or set a custom key"
        : 'The session key is empty',
    });
  return id;
}

/**
 * The root item's `sessionId`; a Chat Trigger asked for a previous session holds the webhook's item,
 * whose body has it (n8n reads the webhook's body data there too).
 */
export function inputSessionId(item: Item | undefined): unknown {
  const json = item?.json;
  if (json?.sessionId !== undefined) return json.sessionId;
  const body = json?.body;
  return body && typeof body === 'object' && !Array.isArray(body) ? body.sessionId : undefined;
}

/** LangChain's stored message (`mapChatMessagesToStoredMessages`): `{type, data}`. */
export function storedMessage(role: 'user' | 'assistant', content: string) {
  const data: Record<string, unknown> = {
    content: content.slice(0, MAX_STORED_MESSAGE_CHARS),
    additional_kwargs: {},
    response_metadata: {},
  };
  if (role === 'assistant') Object.assign(data, { tool_calls: [], invalid_tool_calls: [] });
  return { type: role === 'user' ? 'human' : 'ai', data };
}

/** LangChain's stored form of a history message (`{type, data}`): Redis keeps it whole, Postgres flattened. */
export function storedOfMemory(m: MemoryMessage) {
  const data: Record<string, unknown> = {
    content: m.content.slice(0, MAX_STORED_MESSAGE_CHARS),
    additional_kwargs: m.additionalKwargs,
    response_metadata: {},
  };
  if (m.type === 'ai') Object.assign(data, { tool_calls: [], invalid_tool_calls: [] });
  return { type: m.type, data };
}

/** A stored message (`{type, data}` or Postgres's flat `{type, content}`) as a history message. */
export function memoryMessageOf(value: unknown): MemoryMessage | null {
  const v = (typeof value === 'string' ? safeJson(value) : value) as {
    type?: unknown;
    content?: unknown;
    additional_kwargs?: unknown;
    data?: { content?: unknown; additional_kwargs?: unknown };
  } | null;
  if (!v || typeof v !== 'object') return null;
  const data = v.data && typeof v.data === 'object' ? v.data : v;
  if (typeof data.content !== 'string') return null;
  if (v.type !== 'human' && v.type !== 'ai' && v.type !== 'system') return null;
  const kwargs = data.additional_kwargs;
  return {
    type: v.type,
    content: data.content,
    additionalKwargs:
      kwargs && typeof kwargs === 'object' && !Array.isArray(kwargs) ? (kwargs as Record<string, Json>) : {},
  };
}

/** A stored message back as a chat turn (`{type, data: {content}}`, or Postgres's flat `{type, content}`). */
export function chatMessageOf(value: unknown): ChatMessage | null {
  const v = (typeof value === 'string' ? safeJson(value) : value) as {
    type?: unknown;
    content?: unknown;
    data?: { content?: unknown };
  } | null;
  if (!v || typeof v !== 'object') return null;
  const content = v.data && typeof v.data === 'object' ? v.data.content : v.content;
  if (typeof content !== 'string') return null;
  if (v.type === 'human') return { role: 'user', content };
  if (v.type === 'ai') return { role: 'assistant', content };
  if (v.type === 'system') return { role: 'system', content };
  return null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
