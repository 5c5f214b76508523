/**
 * Ollama → Ollama relay (docs/decisions.md, "Same-dialect relay"): an Ollama client's `/api/chat` or
 * `/api/generate` body goes to an Ollama upstream as it came, and the answer's lines come back as they
 * came, only the model renamed to the registry's name (the name the client asked for, as the
 * translating path answers). A line is parsed only when it must be: one that is not an object, names
 * an error, or ends the answer (its counts are the usage).
 */
import { type RelayAnswer, type RelayOutcome, type TokenUsage, UpstreamError } from '../types.js';
import {
  LineSplitter,
  MAX_LINE_BYTES,
  parseJson,
  type UpstreamCall,
  upstreamErrorText,
} from './http-stream.js';

const LABEL = 'Ollama';
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** One NDJSON line of `/api/chat` or `/api/generate` (the fields accounting reads). */
export interface OllamaLine {
  error?: unknown;
  model?: unknown;
  message?: {
    content?: string;
    thinking?: string;
    tool_calls?: Array<{ function?: { arguments?: unknown } }>;
  };
  response?: string;
  thinking?: string;
  done?: boolean;
  prompt_eval_count?: number;
  eval_count?: number;
}

/** The token counts of an answer's last line, if it has any. */
export function ollamaUsage(chunk: OllamaLine): TokenUsage | null {
  const prompt = chunk.prompt_eval_count;
  const completion = chunk.eval_count;
  if (typeof prompt !== 'number' && typeof completion !== 'number') return null;
  return {
    promptTokens: typeof prompt === 'number' ? prompt : 0,
    completionTokens: typeof completion === 'number' ? completion : 0,
    estimated: false,
  };
}

/**
 * Renames the answer's model from the upstream's name to the registry's: Ollama writes it first in
 * every line, so that is a prefix swap; any other line is re-serialized with the name set.
 */
export function modelRenamer(upstreamModel: string, name: string): (line: string) => string {
  if (upstreamModel === name) return (line) => line;
  const from = `{"model":${JSON.stringify(upstreamModel)}`;
  const to = `{"model":${JSON.stringify(name)}`;
  return (line) => {
    if (line.startsWith(from)) return to + line.slice(from.length);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    return 'model' in parsed ? JSON.stringify({ ...parsed, model: name }) : line;
  };
}

/** A parsed line that is an object and no error; throws the upstream's failure otherwise. */
function checked(line: string, call: UpstreamCall): OllamaLine {
  const chunk = parseJson(line, LABEL) as OllamaLine | null;
  if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk))
    throw new UpstreamError(`${LABEL} upstream sent a line that is not an object`, true);
  if (chunk.error !== undefined)
    throw new UpstreamError(`${LABEL} upstream failed: ${call.scrub(upstreamErrorText(chunk.error))}`, true);
  return chunk;
}

/** Lines that may be the last or an error: parsed. Ollama writes `"done":false` on every other one. */
const mayEnd = (line: string) =>
  line.charCodeAt(0) !== OPEN_BRACE ||
  line.charCodeAt(line.length - 1) !== CLOSE_BRACE ||
  !line.includes('"done":false') ||
  line.includes('"done":true') ||
  line.includes('"error"');

/** The texts of relayed lines (content, thinking, tool arguments), to estimate tokens without counts. */
function relayedText(lines: readonly string[]): string {
  let text = '';
  for (const line of lines) {
    try {
      const chunk = JSON.parse(line) as OllamaLine;
      text += chunk.message?.content ?? chunk.response ?? '';
      text += chunk.message?.thinking ?? chunk.thinking ?? '';
      for (const call of chunk.message?.tool_calls ?? [])
        text += JSON.stringify(call.function?.arguments ?? '');
    } catch {
      // relayed as it came; it adds nothing to count
    }
  }
  return text;
}

/** A whole (non-streamed) answer: checked to be one finished object, its model renamed. */
export async function relayWhole(call: UpstreamCall, rename: (line: string) => string): Promise<RelayAnswer> {
  const bytes = await call.bytes();
  const text = bytes.toString('utf8').trim();
  const answer = checked(text, call);
  if (answer.done !== true) throw new UpstreamError(`${LABEL} upstream sent an unfinished answer`, true);
  const renamed = rename(text);
  return {
    stream: false,
    contentType: 'application/json; charset=utf-8',
    body: renamed === text ? bytes : Buffer.from(renamed),
    outcome: { usage: ollamaUsage(answer), completionText: () => relayedText([text]) },
  };
}

/**
 * A relayed NDJSON stream: each read of the upstream goes on as one string of whole lines. Ends with
 * the usage of the `done` line; a stream that ends without one is the upstream's failure.
 */
export async function* relayLines(
  call: UpstreamCall,
  rename: (line: string) => string,
): AsyncGenerator<string, RelayOutcome, undefined> {
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  const lines: string[] = [];
  const relayed: string[] = [];
  let usage: TokenUsage | null = null;
  const outcome = (): RelayOutcome => ({ usage, completionText: () => relayedText(relayed) });
  /** Appends a line to `out`; true when it ended the answer. */
  const take = (line: string, out: string[]): boolean => {
    if (line.length === 0 || line === '\r') return false;
    const chunk = mayEnd(line) ? checked(line, call) : null;
    relayed.push(line);
    out.push(`${rename(line)}\n`);
    if (chunk?.done !== true) return false;
    usage = ollamaUsage(chunk);
    return true;
  };
  const out: string[] = [];
  for await (const read of call.chunks()) {
    lines.length = 0;
    out.length = 0;
    if (!splitter.push(read, lines))
      throw new UpstreamError(`${LABEL} upstream sent a line over ${MAX_LINE_BYTES} bytes`, true);
    let ended = false;
    try {
      for (const line of lines) {
        ended = take(line, out);
        if (ended) break;
      }
    } catch (error) {
      // The lines before a broken one still reach the client, then the error does.
      if (out.length) yield out.join('');
      throw error;
    }
    if (ended) {
      call.release();
      yield out.join('');
      return outcome();
    }
    if (out.length) yield out.join('');
  }
  const last = splitter.flush();
  out.length = 0;
  if (last !== null && take(last, out)) {
    yield out.join('');
    return outcome();
  }
  throw new UpstreamError(`${LABEL} upstream ended the stream without its final chunk`, true);
}
