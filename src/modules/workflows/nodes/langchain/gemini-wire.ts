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
 * A chat model on Google's Gemini API (`POST {host}/v1beta/{model}:generateContent`), in Gemini's own
 * format: `contents` of `user`/`model` turns made of parts, the system message as `systemInstruction`,
 * tools as `functionDeclarations`, calls as `functionCall` parts and their results as `functionResponse`
 * parts (all of one turn's results in one content, as the API requires). Through the engine's guarded
 * outbound HTTP with the key in `x-goog-api-key`: the answer read whole, or, when the caller streams,
 * from `streamGenerateContent?alt=sse` as it comes.
 */

export interface GeminiTarget {
  host: string;
  apiKey: string;
  /** `models/gemini-2.5-flash` (a bare name gets the `models/` prefix). */
  model: string;
  generationConfig: Record<string, unknown>;
  safetySettings: Array<{ category: string; threshold: string }>;
  timeoutMs: number;
}

const LABEL = 'Google Gemini';

export function geminiModel(deps: EngineDeps, target: GeminiTarget): ChatModel {
  const model = target.model.startsWith('models/') ? target.model : `models/${target.model}`;
  if (!/^models\/[A-Za-z0-9._-]{1,200}$/.test(model))
    throw new NodeOperationError(`'${target.model}' is not a Gemini model name`);
  let ids = 0;
  const newId = () => `call_${++ids}`;
  return {
    kind: 'chatModel',
    name: model,
    async chat(messages, tools, options) {
      const stream = options?.stream === true;
      const system = messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const body: Record<string, unknown> = {
        contents: geminiContents(messages.filter((m) => m.role !== 'system')),
      };
      if (system !== '') body.systemInstruction = { parts: [{ text: system }] };
      if (tools?.length) body.tools = [{ functionDeclarations: tools.map(geminiFunction) }];
      if (Object.keys(target.generationConfig).length > 0) body.generationConfig = target.generationConfig;
      if (target.safetySettings.length > 0) body.safetySettings = target.safetySettings;
      const send = (onData?: (chunk: Buffer) => void) =>
        deps.http({
          method: 'POST',
          url: stream
            ? `${target.host}/v1beta/${model}:streamGenerateContent?alt=sse`
            : `${target.host}/v1beta/${model}:generateContent`,
          headers: {
            'x-goog-api-key': target.apiKey,
            'content-type': 'application/json',
            accept: stream ? 'text/event-stream' : 'application/json',
          },
          body: JSON.stringify(body),
          timeoutMs: target.timeoutMs,
          credentialHeaders: ['x-goog-api-key'],
          ...(onData ? { onData } : {}),
        });
      const whole = (res: OutboundResponse) => answerOf(res, newId);
      if (stream) return { model, events: await streamedEvents(send, geminiReader(newId), whole) };
      return { model, events: whole(await send()) };
    },
  };
}

/** One answer (or one streamed piece): its text, its calls; a blocked prompt throws. */
function pieceOf(parsed: GeminiAnswer, newId: () => string) {
  const candidate = Array.isArray(parsed?.candidates) ? parsed.candidates[0] : undefined;
  if (!candidate) {
    const blocked = parsed?.promptFeedback?.blockReason;
    if (blocked) throw new NodeOperationError(`${LABEL} blocked the prompt (${String(blocked)})`);
    return null;
  }
  const parts = candidate.content?.parts ?? [];
  if (!Array.isArray(parts)) throw new NodeOperationError(`${LABEL} answered with malformed parts`);
  let text = '';
  const calls: WireToolCall[] = [];
  for (const part of parts) {
    if (!part || typeof part !== 'object' || part.thought === true) continue;
    if (typeof part.text === 'string') text += part.text;
    else if (part.functionCall && typeof part.functionCall === 'object') {
      const call = part.functionCall;
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : newId();
      calls.push(wireToolCall(id, call.name, call.args ?? {}, LABEL));
    }
  }
  if (calls.length > MAX_TOOL_CALLS)
    throw new NodeOperationError(`${LABEL} answered with too many tool calls`);
  return { text, calls, finishReason: candidate.finishReason };
}

/** Gemini's finish reason in the loop's words; no answer at all for a reason other than STOP throws. */
function doneReasonOf(wrote: boolean, calls: WireToolCall[], finishReason: string | undefined): string {
  if (calls.length === 0 && !wrote && finishReason && finishReason !== 'STOP')
    throw new NodeOperationError(`${LABEL} stopped without an answer (${String(finishReason)})`);
  return calls.length > 0 ? 'tool_calls' : finishReason === 'MAX_TOKENS' ? 'length' : 'stop';
}

/** A whole generateContent answer; a refusal throws with Google's message. */
function answerOf(res: OutboundResponse, newId: () => string): AsyncIterable<ChatEvent> {
  const parsed = parseBody(res.body, LABEL) as GeminiAnswer;
  if (res.status < 200 || res.status >= 300)
    throw new NodeOperationError(`${LABEL} refused the request (${res.status}): ${errorText(parsed)}`, {
      description: res.body.slice(0, 1000),
    });
  const piece = pieceOf(parsed, newId);
  if (!piece) throw new NodeOperationError(`${LABEL} answered without a candidate`);
  return answerEvents(
    piece.text,
    piece.calls,
    doneReasonOf(piece.text !== '', piece.calls, piece.finishReason),
    {
      prompt: parsed.usageMetadata?.promptTokenCount,
      completion: parsed.usageMetadata?.candidatesTokenCount,
    },
  );
}

/**
 * Gemini's `streamGenerateContent?alt=sse`: server-sent events, each a GenerateContentResponse holding
 * the next parts (text passed on at once; a `functionCall` comes whole in its part), the finish reason
 * on the last and the usage so far on each (the last one counts). An `error` object in an event fails
 * the call with Google's message.
 */
function geminiReader(newId: () => string): LineReader {
  const calls: WireToolCall[] = [];
  let seen = false;
  let wrote = false;
  let finish: string | undefined;
  let prompt: unknown;
  let completion: unknown;
  return {
    line(line, text) {
      const sse = sseData(line);
      if (!sse) return;
      seen = true;
      const event = sse.data as (GeminiAnswer & { error?: unknown }) | undefined;
      if (!event || typeof event !== 'object') return;
      if (event.error !== undefined)
        throw new NodeOperationError(`${LABEL} failed while answering: ${errorText(event).slice(0, 1000)}`);
      if (event.usageMetadata) {
        prompt = event.usageMetadata.promptTokenCount ?? prompt;
        completion = event.usageMetadata.candidatesTokenCount ?? completion;
      }
      const piece = pieceOf(event, newId);
      if (!piece) return;
      if (calls.length + piece.calls.length > MAX_TOOL_CALLS)
        throw new NodeOperationError(`${LABEL} answered with too many tool calls`);
      calls.push(...piece.calls);
      if (piece.text !== '') wrote = true;
      text(piece.text);
      if (piece.finishReason) finish = piece.finishReason;
    },
    seen: () => seen,
    end: () => ({
      calls,
      doneReason: doneReasonOf(wrote, calls, finish),
      usage: usageOf(prompt, completion),
    }),
  };
}

interface GeminiPart {
  text?: unknown;
  thought?: unknown;
  functionCall?: { id?: unknown; name?: unknown; args?: unknown };
}

interface GeminiAnswer {
  candidates?: Array<{ content?: { role?: string; parts?: GeminiPart[] }; finishReason?: string }>;
  promptFeedback?: { blockReason?: unknown };
  usageMetadata?: { promptTokenCount?: unknown; candidatesTokenCount?: unknown };
}

/** JSON-schema keywords Gemini's OpenAPI subset refuses (n8n normalises tool schemas the same way). */
const DROPPED = new Set([
  '$schema',
  'additionalProperties',
  'default',
  'examples',
  '$id',
  '$ref',
  'definitions',
]);

/** A tool's schema in Gemini's subset; an object without properties is sent as no parameters at all. */
export function geminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, geminiSchema(v)]));
    } else out[key] = typeof value === 'object' ? geminiSchema(value) : value;
  }
  return out;
}

function geminiFunction(spec: ToolSpec): Record<string, unknown> {
  const fn: Record<string, unknown> = {
    name: spec.function.name,
    description: spec.function.description ?? '',
  };
  const params = geminiSchema(spec.function.parameters) as
    | { properties?: Record<string, unknown> }
    | undefined;
  if (params?.properties && Object.keys(params.properties).length > 0) fn.parameters = params;
  return fn;
}

/** A tool's answer as the object a `functionResponse` carries (JSON objects as themselves). */
function responseOf(content: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(content);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // text
  }
  return { result: content };
}

/** The platform's turns as Gemini's `contents`: `model` for the assistant, tool results in one user turn. */
export function geminiContents(messages: ChatMessage[]): Array<{ role: string; parts: unknown[] }> {
  const out: Array<{ role: string; parts: unknown[]; results?: boolean }> = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      const part = { functionResponse: { name: m.toolName ?? '', response: responseOf(m.content) } };
      const last = out.at(-1);
      if (last?.results) last.parts.push(part);
      else out.push({ role: 'user', parts: [part], results: true });
      continue;
    }
    const parts: unknown[] = [];
    if (m.content) parts.push({ text: m.content });
    for (const image of m.images ?? []) {
      const match = /^data:([^;]+);base64,(.*)$/s.exec(image);
      parts.push({ inlineData: { mimeType: match?.[1] ?? 'image/png', data: match?.[2] ?? image } });
    }
    if (m.role === 'assistant')
      for (const c of m.toolCalls ?? []) parts.push({ functionCall: { name: c.name, args: c.arguments } });
    if (parts.length === 0) parts.push({ text: '' });
    out.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  return out.map(({ role, parts }) => ({ role, parts }));
}
