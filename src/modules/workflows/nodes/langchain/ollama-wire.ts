import type { ChatMessage } from '../../../llm/index.js';
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

/**
 * A chat model on Ollama's native `POST /api/chat` (`stream: false`): tool calls arrive with object
 * arguments and no ids (ids are made up so the loop can pair results), results go back as `tool` turns
 * with the tool's name. Ollama also runs in front of this platform: its Ollama surface speaks the same.
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
  return {
    kind: 'chatModel',
    name: target.model,
    async chat(messages, tools) {
      const body: Record<string, unknown> = {
        model: target.model,
        messages: ollamaMessages(messages),
        stream: false,
        ...target.top,
      };
      if (Object.keys(target.options).length > 0) body.options = target.options;
      if (tools?.length) body.tools = tools;
      const res = await deps.http({
        method: 'POST',
        url: `${target.base}/api/chat`,
        headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: target.timeoutMs,
        credentialHeaders: Object.keys(target.headers),
      });
      const parsed = parseBody(res.body, LABEL) as OllamaAnswer;
      if (res.status < 200 || res.status >= 300)
        throw new NodeOperationError(`${LABEL} refused the request (${res.status}): ${errorText(parsed)}`, {
          description: res.body.slice(0, 1000),
        });
      const message = parsed?.message;
      if (!message || typeof message !== 'object')
        throw new NodeOperationError(`${LABEL} answered without a message`);
      const raw = message.tool_calls ?? [];
      if (!Array.isArray(raw) || raw.length > MAX_TOOL_CALLS)
        throw new NodeOperationError(`${LABEL} answered with malformed tool calls`);
      const calls: WireToolCall[] = raw.map((c) =>
        wireToolCall(`call_${++ids}`, c?.function?.name, c?.function?.arguments, LABEL),
      );
      return {
        model: target.model,
        events: answerEvents(
          typeof message.content === 'string' ? message.content : '',
          calls,
          calls.length > 0 ? 'tool_calls' : (parsed.done_reason ?? 'stop'),
          { prompt: parsed.prompt_eval_count, completion: parsed.eval_count },
        ),
      };
    },
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
