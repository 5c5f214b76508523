import type { ChatMessage, ToolSpec } from '../../../llm/index.js';
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
 * A chat model on Anthropic's Messages API (`POST /v1/messages`): the system message apart, tool calls as
 * `tool_use` blocks and their results as `tool_result` blocks of a user turn. Through the engine's guarded
 * outbound HTTP, the answer read whole.
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
    async chat(messages, tools) {
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
      const res = await deps.http({
        method: 'POST',
        url: `${target.base}/v1/messages`,
        headers: {
          'x-api-key': target.apiKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
        timeoutMs: target.timeoutMs,
        credentialHeaders: ['x-api-key'],
      });
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
      return {
        model: target.model,
        events: answerEvents(
          text,
          calls,
          parsed.stop_reason === 'tool_use' ? 'tool_calls' : (parsed.stop_reason ?? 'stop'),
          {
            prompt: parsed.usage?.input_tokens,
            completion: parsed.usage?.output_tokens,
          },
        ),
      };
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
