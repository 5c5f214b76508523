import { StringDecoder } from 'node:string_decoder';
import type { OutboundResponse } from '../../../../core/http/outbound.js';
import type { ChatEvent, TokenUsage } from '../../../llm/index.js';
import type { WireToolCall } from './openai-wire.js';

/**
 * A chat model's answer read as it arrives (`stream: true` on the provider's own wire format: OpenAI's
 * and Anthropic's server-sent events, Ollama's JSON lines, Gemini's `alt=sse`). The body is split into
 * lines here; each provider's `LineReader` reads its lines, passing text on at once and keeping tool
 * calls, the stop reason and the tokens for the end. The request's time and size stay the outbound
 * client's bounds (its `onData` sees 2xx bodies only), so a refusal is a status, known before any
 * event is handed over: `streamedEvents` throws it where the agent's fallback model takes over.
 */

/** How a stream ended: the calls put together from their pieces, why it stopped and its tokens. */
export interface StreamEnd {
  calls: WireToolCall[];
  doneReason: string;
  usage: TokenUsage | null;
}

export interface LineReader {
  /** One line of the body, without its line break; the model's text goes to `text` as it comes. */
  line(line: string, text: (content: string) => void): void;
  /** Whether the body was in the stream's format (else it is read as one whole answer). */
  seen(): boolean;
  end(): StreamEnd;
}

/** Tokens as the loop counts them, when the provider gave any. */
export function usageOf(prompt: unknown, completion: unknown): TokenUsage | null {
  if (typeof prompt !== 'number' && typeof completion !== 'number') return null;
  return {
    promptTokens: typeof prompt === 'number' ? prompt : 0,
    completionTokens: typeof completion === 'number' ? completion : 0,
    estimated: false,
  };
}

/** A `data:` line of server-sent events as its JSON object (undefined for anything else). */
export function sseData(line: string): { data: unknown; raw: string } | undefined {
  if (!line.startsWith('data:')) return undefined;
  const raw = line.slice(5).trim();
  try {
    return { data: raw === '' || raw === '[DONE]' ? undefined : JSON.parse(raw), raw };
  } catch {
    return { data: undefined, raw };
  }
}

/**
 * Sends the request with `onData` and resolves once the model wrote its first text, or failed, or the
 * answer ended: a refusal (non-2xx, thrown here by `whole`) or a stream failing before any text (an
 * `error` event first) rejects here, where the agent's fallback model takes over; later failures end
 * the events. `whole` also reads a body that turned out not to be a stream (one JSON document).
 */
export async function streamedEvents(
  send: (onData: (chunk: Buffer) => void) => Promise<OutboundResponse>,
  reader: LineReader,
  whole: (res: OutboundResponse) => AsyncIterable<ChatEvent>,
): Promise<AsyncIterable<ChatEvent>> {
  const decoder = new StringDecoder('utf8');
  const texts: string[] = [];
  let emitted = false;
  const text = (content: string) => {
    if (content === '') return;
    texts.push(content);
    emitted = true;
  };
  let buffered = '';
  let wake: (() => void) | null = null;
  let ended = false;
  let failure: unknown = null;
  let began: () => void = () => undefined;
  const beginning = new Promise<void>((resolve) => {
    began = resolve;
  });
  const onData = (chunk: Buffer) => {
    // After a failure the rest is not read (the request still ends within the client's bounds).
    if (failure) return;
    // Only the new piece is scanned, and the held part is joined once per line: a body with no line
    // break (or many small lines in one chunk) costs linear time, not a rescan of everything held.
    const piece = decoder.write(chunk);
    let start = 0;
    try {
      for (let cut = piece.indexOf('\n'); cut >= 0; cut = piece.indexOf('\n', start)) {
        const line = (buffered + piece.slice(start, cut)).replace(/\r$/, '');
        buffered = '';
        start = cut + 1;
        reader.line(line, text);
      }
      buffered += piece.slice(start);
    } catch (error) {
      failure ??= error;
    }
    if (emitted || failure) began();
    wake?.();
  };
  const response = send(onData).finally(() => {
    ended = true;
    began();
    wake?.();
  });
  // Read at the end (or at once when it ended before beginning); until then a failure is held here.
  response.catch(() => undefined);
  await beginning;
  // Failed before writing anything (a refusal, an error event first): the caller may try elsewhere.
  if (failure && !emitted) throw failure;
  if (ended) {
    const res = await response;
    if (res.status < 200 || res.status >= 300) whole(res);
  }
  return (async function* () {
    for (;;) {
      while (texts.length > 0) yield { type: 'delta', content: texts.shift() as string } as ChatEvent;
      if (failure) throw failure;
      if (ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
    const res = await response;
    const rest = (buffered + decoder.end()).replace(/\r$/, '');
    if (rest !== '') reader.line(rest, text);
    if (!reader.seen()) {
      yield* whole(res);
      return;
    }
    while (texts.length > 0) yield { type: 'delta', content: texts.shift() as string } as ChatEvent;
    const end = reader.end();
    if (end.calls.length > 0) yield { type: 'delta', toolCalls: end.calls };
    yield { type: 'done', doneReason: end.doneReason, usage: end.usage };
  })();
}
