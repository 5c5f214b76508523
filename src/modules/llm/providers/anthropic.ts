/**
 * Talks to Anthropic's Messages API (`/v1/messages` over SSE): a Claude model answers Ollama, OpenAI
 * and Anthropic clients alike. The gateway always streams from it; Anthropic has no embeddings.
 */
import { Type } from 'typebox';
import {
  type ChatEvent,
  type ChatMessage,
  type ChatProvider,
  type ChatRequest,
  type EmbedResult,
  type FileInput,
  type ModelEntry,
  type ProviderDefinition,
  type ToolCall,
  type Unsupported,
  UpstreamError,
} from '../types.js';
import { isTextDocument } from './documents.js';
import {
  joinUrl,
  parseJson,
  SseParser,
  UpstreamAgents,
  UpstreamCall,
  upstreamErrorText,
} from './http-stream.js';
import { openAiOnlyMessageField } from './message-fields.js';
import { RemoteProviderSettings, trimSlash } from './settings.js';

const LABEL = 'Anthropic';
export const DEFAULT_ANTHROPIC_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires `max_tokens`; Ollama and OpenAI clients often send none. */
export const DEFAULT_MAX_TOKENS = 4096;

export const anthropicProviderDefinition: ProviderDefinition = {
  kind: 'anthropic',
  readsFiles: true,
  configSchema: Type.Object({
    ...RemoteProviderSettings,
    version: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
  }),
  defaults: (entry) => ({ baseUrl: trimSlash(entry.baseUrl ?? DEFAULT_ANTHROPIC_URL) }),
  create: async () => new AnthropicProvider(),
};

/** What Anthropic's Messages API has no parameter for: refused with a 400 naming the field. */
function anthropicUnsupported(request: ChatRequest): Unsupported | null {
  const o = request.options;
  const x = request.openAi ?? {};
  const no = (field: string, what: string): Unsupported => ({
    field,
    reason: `is not supported by Anthropic models (${what})`,
  });
  if (request.format === 'json') return no('body.response_format', 'JSON takes a schema: use json_schema');
  if (o.temperature !== undefined && o.temperature > 1)
    return { field: 'body.temperature', reason: 'must be at most 1 for an Anthropic model' };
  if (o.seed !== undefined) return no('body.seed', 'no seed');
  if (o.presencePenalty !== undefined) return no('body.presence_penalty', 'no penalties');
  if (o.frequencyPenalty !== undefined) return no('body.frequency_penalty', 'no penalties');
  if (o.extra && Object.keys(o.extra).length > 0)
    return no(`body.options.${Object.keys(o.extra)[0]}`, 'an Ollama option');
  if (x.store !== undefined) return no('body.store', 'stores no completions');
  if (x.metadata !== undefined) return no('body.metadata', 'takes only a user id');
  if (x.serviceTier !== undefined) return no('body.service_tier', 'its tiers are its own');
  if (x.reasoningEffort === 'minimal') return no('body.reasoning_effort', "its efforts start at 'low'");
  if (request.keepAlive !== undefined) return no('body.keep_alive', 'no model loading');
  if (request.logprobs) return no('body.logprobs', 'no token probabilities');
  if (request.n !== undefined && request.n > 1) return no('body.n', 'one answer per request');
  const message = openAiOnlyMessageField(request.messages, 'an Anthropic model');
  if (message) return message;
  // A completion is sent as a one-turn chat: what only a completion has cannot be.
  const g = request.generate;
  if (g?.suffix !== undefined) return no('body.suffix', 'no fill-in-the-middle');
  if (g?.raw === true) return no('body.raw', 'the prompt always goes through its chat format');
  if (g?.template !== undefined) return no('body.template', 'no prompt template');
  if (g?.context !== undefined) return no('body.context', 'no token context');
  return null;
}

export class AnthropicProvider implements ChatProvider {
  private readonly agents = new UpstreamAgents();

  close(): void {
    this.agents.close();
  }

  unsupported(request: ChatRequest): Unsupported | null {
    return anthropicUnsupported(request);
  }

  async chat(
    request: ChatRequest,
    entry: ModelEntry,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ChatEvent>> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': entry.version ?? DEFAULT_ANTHROPIC_VERSION,
    };
    if (entry.apiKey) headers['x-api-key'] = entry.apiKey;
    const call = await UpstreamCall.open(
      {
        url: joinUrl(entry.baseUrl ?? DEFAULT_ANTHROPIC_URL, '/v1/messages'),
        method: 'POST',
        headers,
        body: JSON.stringify(anthropicBody(request)),
        timeoutMs: entry.timeoutMs,
        signal,
        label: LABEL,
      },
      this.agents,
    );
    if (call.status < 200 || call.status > 299) throw await call.httpError(anthropicErrorMessage);
    return readMessageStream(call);
  }

  async embed(): Promise<EmbedResult> {
    throw new UpstreamError(`${LABEL} has no embedding models`, false, 400);
  }
}

/** The `/v1/messages` body for a neutral request (always streamed). */
export function anthropicBody(request: ChatRequest): Record<string, unknown> {
  const o = request.options;
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: o.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: anthropicMessages(request.messages.filter((m) => m.role !== 'system')),
    stream: true,
  };
  if (system !== '') body.system = system;
  if (o.temperature !== undefined) body.temperature = o.temperature;
  if (o.topP !== undefined) body.top_p = o.topP;
  if (o.topK !== undefined) body.top_k = o.topK;
  if (o.stop?.length) body.stop_sequences = o.stop;
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => {
      const tool: Record<string, unknown> = {
        name: t.function.name,
        input_schema: t.function.parameters ?? { type: 'object', properties: {} },
      };
      if (t.function.description !== undefined) tool.description = t.function.description;
      if (typeof t.function.strict === 'boolean') tool.strict = t.function.strict;
      return tool;
    });
  }
  const choice = request.toolChoice;
  const parallel = request.openAi?.parallelToolCalls;
  if (choice !== undefined || parallel === false) {
    const c: Record<string, unknown> =
      choice === undefined || choice === 'auto'
        ? { type: 'auto' }
        : choice === 'required'
          ? { type: 'any' }
          : choice === 'none'
            ? { type: 'none' }
            : { type: 'tool', name: choice.name };
    if (parallel === false && c.type !== 'none') c.disable_parallel_tool_use = true;
    body.tool_choice = c;
  }
  const output: Record<string, unknown> = {};
  if (request.format !== undefined && request.format !== 'json')
    output.format = { type: 'json_schema', schema: request.format };
  if (request.openAi?.reasoningEffort !== undefined) output.effort = request.openAi.reasoningEffort;
  if (Object.keys(output).length > 0) body.output_config = output;
  const user = request.openAi?.user;
  if (user !== undefined) body.metadata = { user_id: user };
  const budget = request.anthropic?.thinkingBudget;
  if (request.think === true || budget !== undefined) {
    // Ollama's `think: true` names no budget: a quarter of the answer's tokens, at least Anthropic's 1,024.
    const tokens = budget ?? Math.max(1024, Math.floor((o.maxTokens ?? DEFAULT_MAX_TOKENS) / 4));
    body.thinking = { type: 'enabled', budget_tokens: tokens };
  } else if (request.think === false) body.thinking = { type: 'disabled' };
  return body;
}

type Block = Record<string, unknown>;

/**
 * Anthropic's alternating turns: tool results travel as `tool_result` blocks of a user turn, and
 * consecutive turns of one role are merged. Calls without ids (an Ollama conversation) get ids made
 * up per assistant turn, and the tool answers after it are matched to them by name, else in order.
 */
function anthropicMessages(messages: ChatMessage[]): Array<{ role: string; content: Block[] }> {
  const out: Array<{ role: string; content: Block[] }> = [];
  let open: Array<{ id: string; name: string }> = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      let id = m.toolCallId;
      if (id === undefined) {
        const at = open.findIndex((call) => call.name === m.toolName);
        id = open.splice(at === -1 ? 0 : at, 1)[0]?.id ?? `toolu_${i}`;
      }
      const result: Block = { type: 'tool_result', tool_use_id: id, content: m.content };
      if (m.isError) result.is_error = true;
      push('user', [result]);
      return;
    }
    // Earlier thinking is not sent back: Anthropic checks each thinking block's signature, which only
    // it can make, and leaves earlier turns' thinking out of the context anyway.
    const blocks: Block[] = [];
    for (const image of m.images ?? []) blocks.push(imageBlock(image));
    for (const file of m.files ?? []) blocks.push(documentBlock(file));
    if (m.content !== '') blocks.push({ type: 'text', text: m.content });
    if (m.role === 'assistant' && m.toolCalls?.length) {
      open = m.toolCalls.map((call, c) => ({ id: call.id ?? `toolu_${i}_${c}`, name: call.name }));
      m.toolCalls.forEach((call, c) => {
        blocks.push({ type: 'tool_use', id: open[c]?.id, name: call.name, input: call.arguments });
      });
    }
    if (blocks.length === 0) blocks.push({ type: 'text', text: '' });
    push(m.role === 'assistant' ? 'assistant' : 'user', blocks);
  });
  return out;
}

/**
 * A document block: a PDF as base64, a text document as Anthropic's plain-text source (which it
 * takes as `text/plain` only, whatever the text's own type); placed before the text, as images are.
 */
function documentBlock(file: FileInput): Block {
  const source = isTextDocument(file.mediaType)
    ? { type: 'text', media_type: 'text/plain', data: Buffer.from(file.data, 'base64').toString('utf8') }
    : { type: 'base64', media_type: file.mediaType, data: file.data };
  return { type: 'document', source, ...(file.filename ? { title: file.filename } : {}) };
}

/** An image block from base64 (its type sniffed from the first bytes) or a data: URL. */
function imageBlock(image: string): Block {
  const dataUrl = /^data:([^;,]+);base64,/.exec(image);
  const data = dataUrl ? image.slice(dataUrl[0].length) : image;
  const mediaType =
    dataUrl?.[1] ??
    (data.startsWith('/9j/')
      ? 'image/jpeg'
      : data.startsWith('R0lGOD')
        ? 'image/gif'
        : data.startsWith('UklGR')
          ? 'image/webp'
          : 'image/png');
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
}

const STOP: Record<string, string> = { max_tokens: 'length', tool_use: 'tool_calls' };

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: Usage };
  content_block?: { type?: string; id?: string; name?: string; text?: string; thinking?: string };
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: Usage;
  error?: unknown;
}
interface Usage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** The events of one Messages stream; throws `UpstreamError` on anything but a clean `message_stop`. */
async function* readMessageStream(call: UpstreamCall): AsyncGenerator<ChatEvent, void, undefined> {
  const sse = new SseParser();
  let input = 0;
  let output = 0;
  let counted = false;
  let stopReason = 'end_turn';
  let complete = false;
  /** Tool calls being assembled, by block index. */
  const tools = new Map<number, { id: string; name: string; json: string }>();
  for await (const line of call.lines()) {
    const frame = sse.push(line);
    if (frame === null) continue;
    const event = parseJson(frame.data, LABEL) as StreamEvent | null;
    if (event === null || typeof event !== 'object')
      throw new UpstreamError(`${LABEL} upstream sent an event that is not an object`, true);
    switch (event.type) {
      case 'message_start': {
        const usage = event.message?.usage;
        if (typeof usage?.input_tokens === 'number') {
          input =
            usage.input_tokens +
            (usage.cache_creation_input_tokens ?? 0) +
            (usage.cache_read_input_tokens ?? 0);
          counted = true;
        }
        if (typeof usage?.output_tokens === 'number') output = usage.output_tokens;
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'tool_use' && typeof event.index === 'number') {
          if (!block.name) throw new UpstreamError(`${LABEL} upstream sent a tool call without a name`, true);
          tools.set(event.index, { id: block.id ?? `toolu_${event.index}`, name: block.name, json: '' });
        } else if (block?.type === 'text' && block.text) yield { type: 'delta', content: block.text };
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && delta.text) yield { type: 'delta', content: delta.text };
        else if (delta?.type === 'thinking_delta' && delta.thinking)
          yield { type: 'delta', thinking: delta.thinking };
        else if (delta?.type === 'input_json_delta' && typeof event.index === 'number') {
          const tool = tools.get(event.index);
          if (tool) tool.json += delta.partial_json ?? '';
        }
        break;
      }
      case 'content_block_stop': {
        const tool = typeof event.index === 'number' ? tools.get(event.index) : undefined;
        if (tool) {
          tools.delete(event.index as number);
          yield { type: 'delta', toolCalls: [toolCallOf(tool)] };
        }
        break;
      }
      case 'message_delta': {
        if (event.delta?.stop_reason) stopReason = event.delta.stop_reason;
        const usage = event.usage;
        if (typeof usage?.output_tokens === 'number') output = usage.output_tokens;
        if (typeof usage?.input_tokens === 'number') {
          input =
            usage.input_tokens +
            (usage.cache_creation_input_tokens ?? 0) +
            (usage.cache_read_input_tokens ?? 0);
          counted = true;
        }
        break;
      }
      case 'message_stop':
        complete = true;
        break;
      case 'error':
        throw new UpstreamError(
          `${LABEL} upstream failed: ${call.scrub(upstreamErrorText(event.error ?? event))}`,
          true,
        );
      default:
        break; // ping, and event types added later
    }
    if (complete) {
      call.release();
      break;
    }
  }
  if (!complete) throw new UpstreamError(`${LABEL} upstream ended the stream before message_stop`, true);
  yield {
    type: 'done',
    doneReason: STOP[stopReason] ?? 'stop',
    usage: counted ? { promptTokens: input, completionTokens: output, estimated: false } : null,
  };
}

function toolCallOf(tool: { id: string; name: string; json: string }): ToolCall {
  const args = tool.json.trim() === '' ? {} : parseJson(tool.json, LABEL);
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new UpstreamError(`${LABEL} upstream sent tool input that is not an object`, true);
  return { id: tool.id, name: tool.name, arguments: args as Record<string, unknown> };
}

function anthropicErrorMessage(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'error' in body) return upstreamErrorText(body.error);
  return undefined;
}
