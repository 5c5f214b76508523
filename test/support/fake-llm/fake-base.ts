/**
 * What the fake Ollama and OpenAI servers share: the HTTP server, the request log, the abort count,
 * the knobs tests turn between cases, and the deterministic answers (echo replies, hashed embeddings).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake received. */
export interface FakeLlmRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; the raw text when it is not JSON; null when empty. */
  body: unknown;
  /** The body's text as it arrived. */
  raw: string;
}

/** A tool call the fake answers with instead of text. */
export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Knobs: set them between tests; `reset()` puts them back. */
export interface FakeKnobs {
  /** Stall this long before the response headers. */
  delayHeadersMs: number;
  /** Pause between two streamed chunks. */
  chunkDelayMs: number;
  /** Pause between the last frame and the end of the body (as servers that flush each line do). */
  endDelayMs: number;
  /** Send this many chunks, then hang (headers are sent; nothing else until the client leaves). */
  stallAfterChunks: number | null;
  /** Send this many chunks, then destroy the socket. */
  closeAfterChunks: number | null;
  /** Send this many chunks, then the format's in-stream error object, then end. */
  errorAfterChunks: number | null;
  /** Send a non-JSON line / broken SSE event after the first chunk (then finish normally). */
  garbage: boolean;
  /** Answer with these tool calls instead of text. */
  toolCall: FakeToolCall | FakeToolCall[] | null;
}

export interface FakeLlmServer extends FakeKnobs {
  /** The base URL a registry entry uses. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: FakeLlmRequest[];
  /** Requests whose client went away before the fake finished answering. */
  readonly aborted: number;
  /** TCP connections accepted (keep-alive clients reuse them). */
  readonly connections: number;
  /** Responses the fake sent to their end (handed to the socket whole). */
  readonly finished: number;
  /** Model names the fake serves (mutable). */
  models: string[];
  /** The next `count` POST requests (the model calls) answer `status` with the format's error body. */
  failNext(status: number, count?: number, message?: string): void;
  /** Resolves once `aborted` reaches `count` (rejects after `timeoutMs`). */
  untilAborted(count?: number, timeoutMs?: number): Promise<void>;
  /** Knobs back to their defaults; the request log and the counts emptied. */
  reset(): void;
  /** Ends the server and every open socket (hanging streams included). */
  close(): Promise<void>;
}

export const DEFAULT_KNOBS: FakeKnobs = {
  delayHeadersMs: 0,
  chunkDelayMs: 0,
  endDelayMs: 0,
  stallAfterChunks: null,
  closeAfterChunks: null,
  errorAfterChunks: null,
  garbage: false,
  toolCall: null,
};

/** One pending scripted failure. */
export interface Failure {
  status: number;
  message: string | undefined;
}

/** The per-request view a format's handler works with. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  body: unknown;
  server: FakeLlmServer;
  /** Stalls for `ms`; false when the client left or the server closed meanwhile. */
  sleep(ms: number): Promise<boolean>;
  /** True once the answer must stop (client gone, socket destroyed, server closing). */
  gone(): boolean;
  /** Destroys the socket on purpose (not counted as a client abort). */
  cut(): void;
  /** Keeps the response open until the client leaves or the server closes. */
  hang(): Promise<void>;
}

export interface FakeFormat {
  /** Base path added to the URL (`/v1` for OpenAI). */
  basePath: string;
  /** Answers a failure in the format's error shape. */
  sendError(res: ServerResponse, status: number, message: string): void;
  /** Message for `failNext` errors by status. */
  failureMessage(status: number): string;
  /** True when the request carries the key (or no key is configured). */
  authorized(req: IncomingMessage): boolean;
  handle(exchange: Exchange): Promise<void>;
}

/** Starts a fake speaking `format` on 127.0.0.1 (random port). */
export async function startFake(format: FakeFormat, models: string[]): Promise<FakeLlmServer> {
  const requests: FakeLlmRequest[] = [];
  const failures: Failure[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const wakers = new Set<() => void>();
  let aborted = 0;
  let connections = 0;
  let finished = 0;
  let closing = false;
  const abortWaiters = new Set<() => void>();

  const state: FakeLlmServer = {
    ...DEFAULT_KNOBS,
    url: '',
    requests,
    get aborted() {
      return aborted;
    },
    get connections() {
      return connections;
    },
    get finished() {
      return finished;
    },
    models,
    failNext(status, count = 1, message) {
      for (let i = 0; i < count; i++) failures.push({ status, message });
    },
    untilAborted(count = 1, timeoutMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (aborted >= count) {
            abortWaiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          abortWaiters.delete(check);
          reject(new Error(`fake saw ${aborted} aborted requests, expected ${count}`));
        }, timeoutMs);
        abortWaiters.add(check);
        check();
      });
    },
    reset() {
      Object.assign(state, DEFAULT_KNOBS);
      requests.length = 0;
      failures.length = 0;
      aborted = 0;
      connections = 0;
      finished = 0;
    },
    close: async () => {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const wake of wakers) wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((req, res) => {
    let cutOnPurpose = false;
    let closed = false;
    res.on('finish', () => {
      finished += 1;
    });
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished && !cutOnPurpose && !closing) {
        aborted += 1;
        for (const check of abortWaiters) check();
      }
      for (const wake of wakers) wake();
    });
    // Not `req.destroyed`: a request is destroyed once its body was read.
    const gone = (): boolean => closing || closed;
    const exchange: Omit<Exchange, 'path' | 'body'> = {
      req,
      res,
      server: state,
      gone,
      sleep(ms) {
        if (ms <= 0) return Promise.resolve(!gone());
        return new Promise<boolean>((resolve) => {
          const wake = (): void => {
            clearTimeout(timer);
            timers.delete(timer);
            wakers.delete(wake);
            resolve(!gone());
          };
          const timer = setTimeout(wake, ms);
          timers.add(timer);
          wakers.add(wake);
        });
      },
      cut() {
        cutOnPurpose = true;
        res.destroy();
      },
      hang() {
        return new Promise<void>((resolve) => {
          if (gone()) return resolve();
          res.once('close', () => resolve());
        });
      },
    };
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://fake.local').pathname;
      let body: unknown = null;
      if (raw !== '') {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, raw });
      void answer({ ...exchange, path, body }).catch((error: unknown) => {
        if (!res.headersSent) format.sendError(res, 500, `fake failed: ${String(error)}`);
        else res.destroy();
      });
    });
  });

  async function answer(exchange: Exchange): Promise<void> {
    const { res } = exchange;
    if (!(await exchange.sleep(state.delayHeadersMs))) return;
    if (!format.authorized(exchange.req)) {
      format.sendError(res, 401, 'Incorrect API key provided.');
      return;
    }
    const failure = exchange.req.method === 'POST' ? failures.shift() : undefined;
    if (failure) {
      format.sendError(res, failure.status, failure.message ?? format.failureMessage(failure.status));
      return;
    }
    await format.handle(exchange);
  }

  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (state as { url: string }).url = `http://127.0.0.1:${port}${format.basePath}`;
  return state;
}

/** Sends a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Reads a request body as an object (empty object when it is not one). */
export function asObject(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

/** The tool calls a knob asks for, as a list. */
export function toolCallsOf(knob: FakeToolCall | FakeToolCall[] | null): FakeToolCall[] {
  if (knob === null) return [];
  return Array.isArray(knob) ? knob : [knob];
}

/** The reply the fakes give: `Echo: <text>`. */
export function echoReply(text: string): string {
  return `Echo: ${text}`;
}

/** A reply split the way the fakes stream it: one piece per word, spaces kept in front. */
export function echoChunks(text: string): string[] {
  const reply = echoReply(text);
  return reply.split(/(?= )/);
}

/** The fakes' token count: words (whitespace-separated), at least 1 for non-empty text. */
export function fakeTokenCount(text: string): number {
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return words;
}

/** Deterministic unit vector for `text` (SHA-256 bytes mapped to [-1, 1], then normalised). */
export function fakeEmbedding(text: string, dims = 8): number[] {
  const out: number[] = [];
  let counter = 0;
  while (out.length < dims) {
    const digest = createHash('sha256').update(`${counter}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dims; i += 2) {
      out.push(digest.readUInt16LE(i) / 32767.5 - 1);
    }
    counter += 1;
  }
  const norm = Math.sqrt(out.reduce((sum, x) => sum + x * x, 0)) || 1;
  // Rounded through float32 so the float and base64 encodings give the same numbers.
  return out.map((x) => Math.fround(x / norm));
}

/** The text of the last user message of a chat body (string content or OpenAI content parts). */
export function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = asObject(messages[i]);
    if (message.role !== 'user') continue;
    return contentText(message.content);
  }
  return '';
}

/** Text of a message content: a string, or the `text` parts of an OpenAI content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => asObject(part))
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/** Prompt tokens of a chat body: the words of every message. */
export function promptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let total = 0;
  for (const message of messages) total += fakeTokenCount(contentText(asObject(message).content));
  return total;
}

/** Writes one piece of a stream; false when the client is gone. */
export function write(res: ServerResponse, text: string): boolean {
  if (res.destroyed) return false;
  res.write(text);
  return true;
}

/** The in-stream frames a format uses for the `garbage` and `errorAfterChunks` knobs. */
export interface BadFrames {
  garbage: string;
  error: string;
}

/**
 * Streams `frames` (NDJSON lines or SSE events, final ones included) under the knobs as they were
 * when the request arrived: pauses, a stall, a cut socket, an error frame, a garbage frame.
 */
export async function streamFrames(
  exchange: Exchange,
  contentType: string,
  frames: string[],
  bad: BadFrames,
): Promise<void> {
  const { res } = exchange;
  const { stallAfterChunks, closeAfterChunks, errorAfterChunks, garbage, chunkDelayMs, endDelayMs } =
    exchange.server;
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  res.flushHeaders();
  for (let i = 0; i <= frames.length; i++) {
    if (stallAfterChunks === i) return exchange.hang();
    if (closeAfterChunks === i) return exchange.cut();
    if (errorAfterChunks === i) {
      res.end(bad.error);
      return;
    }
    if (i === frames.length) break;
    if (i > 0 && !(await exchange.sleep(chunkDelayMs))) return;
    if (!write(res, frames[i] as string)) return;
    if (garbage && i === 0) write(res, bad.garbage);
  }
  if (!(await exchange.sleep(endDelayMs))) return;
  res.end();
}
