/**
 * The plumbing both HTTP providers share: one keep-alive request to an upstream with an abort signal
 * and a silence timeout, a bounded NDJSON line splitter and an SSE event parser. Everything that goes
 * wrong here becomes an `UpstreamError`, so the service sees one kind of failure.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { headerSecrets, safeCause } from '../../../core/redact.js';
import { type Abortable, UpstreamError } from '../types.js';

/** The longest NDJSON line or SSE line the providers accept (a chunk is a few hundred bytes). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Cap on a non-streamed response body (embeddings of a large batch are the biggest). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Cap on an error body read to build a message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What differs between the upstream kinds when posting to them. */
export interface UpstreamKind {
  /** Names the upstream in error messages (`Ollama`, `OpenAI`). */
  label: string;
  defaultBaseUrl: string;
  /** The message of the kind's error body. */
  errorMessage: (body: unknown) => string | undefined;
}

/**
 * POSTs a JSON body (already serialized: a relayed client body is sent as its bytes) to a model's
 * upstream (its base URL and key from the registry entry); resolves once a 2xx answer's headers
 * arrived, else rejects with the upstream's own error message.
 */
async function postBytes(
  agents: UpstreamAgents,
  kind: UpstreamKind,
  entry: { baseUrl?: string; apiKey?: string; timeoutMs: number },
  path: string,
  body: string | Buffer,
  signal: Abortable,
  accept: string,
): Promise<UpstreamCall> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  if (entry.apiKey) headers.authorization = `Bearer ${entry.apiKey}`;
  const call = await UpstreamCall.open(
    {
      url: joinUrl(entry.baseUrl ?? kind.defaultBaseUrl, path),
      method: 'POST',
      headers,
      body,
      timeoutMs: entry.timeoutMs,
      signal,
      label: kind.label,
    },
    agents,
  );
  if (call.status < 200 || call.status > 299) throw await call.httpError(kind.errorMessage);
  return call;
}

/** What both HTTP providers share: their keep-alive agents, the JSON POST, and closing. */
export abstract class JsonUpstream {
  protected readonly agents = new UpstreamAgents();

  constructor(private readonly kind: UpstreamKind) {}

  close(): void {
    this.agents.close();
  }

  /** Sends the request; resolves once a 2xx answer's headers arrived, else rejects. */
  protected post(
    entry: { baseUrl?: string; apiKey?: string; timeoutMs: number },
    path: string,
    body: unknown,
    signal: AbortSignal,
    accept: string,
  ): Promise<UpstreamCall> {
    return postBytes(this.agents, this.kind, entry, path, JSON.stringify(body), signal, accept);
  }

  /** Sends a body that is JSON already (a relayed client body); as `post` otherwise. */
  protected postRaw(
    entry: { baseUrl?: string; apiKey?: string; timeoutMs: number },
    path: string,
    body: string | Buffer,
    signal: Abortable,
    accept: string,
  ): Promise<UpstreamCall> {
    return postBytes(this.agents, this.kind, entry, path, body, signal, accept);
  }
}

/** One keep-alive agent per scheme, owned by a provider instance. */
export class UpstreamAgents {
  readonly http = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  readonly https = new https.Agent({ keepAlive: true, scheduling: 'lifo' });

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

export interface UpstreamRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Time to the response headers, and the longest silence while the body is read. */
  timeoutMs: number;
  signal: Abortable;
  /** Names the upstream in error messages (`Ollama`, `OpenAI`). */
  label: string;
}

/**
 * A request whose headers arrived. Read its body once, with `lines()` or `text()`; a body nobody reads
 * is still bounded by the silence timeout and the signal, and `destroy()` ends it at once.
 */
export class UpstreamCall {
  /** Set when this side ended the request (timeout, abort, limit): the error the reader should see. */
  private failure: UpstreamError | null = null;
  /** False while the consumer holds a yielded line: its slowness is not the upstream's silence. */
  private waiting = true;
  private released = false;

  private constructor(
    private readonly req: http.ClientRequest,
    readonly response: IncomingMessage,
    private readonly options: UpstreamRequest,
    /** Bounds the silence; refreshed (not re-created) per chunk. Cleared when the response closes. */
    private readonly timer: NodeJS.Timeout,
  ) {}

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** Starts the request; resolves when headers arrive (any status), rejects on anything else. */
  static open(options: UpstreamRequest, agents: UpstreamAgents): Promise<UpstreamCall> {
    const { url, signal, label, timeoutMs } = options;
    if (signal.aborted) return Promise.reject(abortedError(label));
    return new Promise<UpstreamCall>((resolve, reject) => {
      let call: UpstreamCall | null = null;
      let failure: UpstreamError | null = null;
      const fail = (error: UpstreamError): void => {
        if (call) call.fail(error);
        else {
          failure ??= error;
          req.destroy(error);
        }
      };
      const timer = setTimeout(() => {
        if (call && !call.waiting) {
          timer.refresh();
          return;
        }
        fail(
          new UpstreamError(
            call
              ? `${label} upstream sent nothing for ${timeoutMs} ms`
              : `${label} upstream did not answer within ${timeoutMs} ms`,
            true,
          ),
        );
      }, timeoutMs);
      const onAbort = (): void => fail(abortedError(label));
      let unfollow: (() => void) | null = null;
      const cleanUp = (): void => {
        clearTimeout(timer);
        unfollow?.();
      };
      const isHttps = url.protocol === 'https:';
      const req = (isHttps ? https : http).request({
        ...requestTarget(url),
        method: options.method,
        headers: options.body === undefined ? options.headers : withLength(options.headers, options.body),
        agent: isHttps ? agents.https : agents.http,
      });
      unfollow = follow(signal, onAbort);
      req.once('response', (res) => {
        call = new UpstreamCall(req, res, options, timer);
        timer.refresh();
        res.once('close', cleanUp);
        resolve(call);
      });
      req.on('error', (error) => {
        if (call) return; // the body reader reports it
        cleanUp();
        // The code, not the message: Node's message names the internal address (`connect ECONNREFUSED host:port`).
        reject(failure ?? new UpstreamError(`${label} upstream unreachable (${errorCode(error)})`, true));
      });
      req.end(options.body);
    });
  }

  /** Ends the request; the reader (if any) throws `error`. A completed response is left alone. */
  fail(error: UpstreamError): void {
    if (this.response.complete) return;
    this.failure ??= error;
    this.req.destroy(error);
    this.response.destroy();
  }

  destroy(): void {
    this.fail(abortedError(this.options.label));
  }

  /**
   * Marks the answer as complete (the final chunk or `[DONE]` was read): when the reader stops now, the
   * rest of the body (the chunked terminator) is drained so the keep-alive socket is reused, not destroyed.
   */
  release(): void {
    this.released = true;
  }

  /** The body as NDJSON lines (or SSE lines), each at most `maxLineBytes`; CR before LF is kept. */
  async *lines(maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<string, void, undefined> {
    const splitter = new LineSplitter(maxLineBytes);
    const out: string[] = [];
    // Not destroyed when the reader stops early: `release()` decides between draining and destroying.
    const chunks = reads(this.response);
    try {
      for await (const chunk of chunks) {
        this.waiting = false;
        out.length = 0;
        if (!splitter.push(chunk, out)) {
          this.fail(
            new UpstreamError(`${this.options.label} upstream sent a line over ${maxLineBytes} bytes`, true),
          );
          break;
        }
        for (const line of out) yield line;
        this.waiting = true;
        this.timer.refresh();
      }
    } catch (error) {
      throw this.failure ?? lostError(this.options.label, error);
    } finally {
      if (!this.response.complete) {
        if (this.released && !this.failure) this.drain();
        else this.fail(abortedError(this.options.label));
      }
    }
    if (this.failure) throw this.failure;
    if (!this.response.complete) throw lostError(this.options.label, null);
    const last = splitter.flush();
    if (last !== null) yield last;
  }

  /** The body's reads as they come (a same-dialect relay frames them itself); bounded as `lines()` is. */
  async *chunks(): AsyncGenerator<Buffer, void, undefined> {
    try {
      for await (const chunk of reads(this.response)) {
        this.waiting = false;
        yield chunk;
        this.waiting = true;
        this.timer.refresh();
      }
    } catch (error) {
      throw this.failure ?? lostError(this.options.label, error);
    } finally {
      if (!this.response.complete) {
        if (this.released && !this.failure) this.drain();
        else this.fail(abortedError(this.options.label));
      }
    }
    if (this.failure) throw this.failure;
    if (!this.response.complete) throw lostError(this.options.label, null);
  }

  /** Reads and drops the rest of the body, still bounded by the silence timeout. */
  private drain(): void {
    this.waiting = true;
    this.timer.refresh();
    this.response.resume();
  }

  /** The whole body as text, at most `maxBytes`. */
  async text(maxBytes = MAX_BODY_BYTES): Promise<string> {
    return (await this.bytes(maxBytes)).toString('utf8');
  }

  /**
   * The whole body, at most `maxBytes`. Read with listeners, not an async iterator: a whole answer
   * is read once per non-streamed call, and the iterator's promises and end-of-stream watchers cost
   * more than the usual one-chunk body.
   */
  bytes(maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
    const response = this.response;
    const label = this.options.label;
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const settle = (error: unknown): void => {
        if (settled) return;
        settled = true;
        response.off('data', onData);
        response.off('end', onEnd);
        response.off('error', onError);
        response.off('close', onClose);
        if (this.failure) reject(this.failure);
        else if (error !== undefined) reject(lostError(label, error));
        else if (!response.complete) reject(lostError(label, null));
        else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > maxBytes) {
          this.fail(new UpstreamError(`${label} upstream response is over ${maxBytes} bytes`, true));
          settle(undefined);
          return;
        }
        chunks.push(chunk);
        this.timer.refresh();
      };
      const onEnd = (): void => settle(undefined);
      const onError = (error: Error): void => settle(error);
      // Closed without its end (destroyed by a timeout, an abort or the peer): not complete.
      const onClose = (): void => settle(undefined);
      if (response.destroyed || response.readableEnded) return settle(undefined);
      response.on('data', onData);
      response.once('end', onEnd);
      response.once('error', onError);
      response.once('close', onClose);
    });
  }

  /**
   * Text from the upstream (an error message), as callers and logs may see it: the request's own
   * secrets (its Authorization / X-API-Key values) and anything shaped like a key removed, one short line.
   */
  scrub(text: string): string {
    return safeCause(text, headerSecrets(this.options.headers));
  }

  /**
   * Reads a non-2xx answer and turns it into the error the provider rejects with: the status and a
   * short, scrubbed cause (an upstream may echo the key it was sent), never the whole body.
   */
  async httpError(extractMessage: (body: unknown) => string | undefined): Promise<UpstreamError> {
    const status = this.status;
    let detail: string | undefined;
    try {
      const text = await this.text(MAX_ERROR_BODY_BYTES);
      try {
        detail = extractMessage(JSON.parse(text));
      } catch {
        detail = text.trim().slice(0, 500) || undefined;
      }
    } catch {
      // The status says enough when the body cannot be read.
    }
    const retryable = status === 429 || status >= 500;
    const cause = detail ? this.scrub(detail) : '';
    const message = `${this.options.label} upstream answered ${status}${cause ? `: ${cause}` : ''}`;
    return new UpstreamError(message, retryable, status);
  }
}

const ignore = (): void => {};

/**
 * A response's reads, one at a time (the stream paused while one is held, so a slow reader holds the
 * upstream back), as `response.iterator({ destroyOnReturn: false })` gives them: an error is thrown,
 * the end or a close ends them, and stopping early leaves the response as it is for the caller to
 * drain or end. Listeners, not Node's iterator: its promises and end-of-stream watchers cost about
 * 30 µs of CPU per streamed answer (docs/decisions.md, "Gateway CPU on a quiet machine").
 */
function reads(stream: IncomingMessage): AsyncIterableIterator<Buffer> {
  const queue: Buffer[] = [];
  let ended = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const onData = (chunk: Buffer): void => {
    queue.push(chunk);
    stream.pause();
    notify();
  };
  const onEnd = (): void => {
    ended = true;
    notify();
  };
  const onError = (error: unknown): void => {
    failure ??= { error };
    notify();
  };
  const stop = (): void => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('close', onEnd);
    stream.off('error', onError);
    // The caller drains or ends what is left; a socket error after that is already its failure.
    stream.on('error', ignore);
  };
  stream.on('data', onData);
  stream.once('end', onEnd);
  stream.once('close', onEnd);
  stream.on('error', onError);
  const iterator: AsyncIterableIterator<Buffer> = {
    [Symbol.asyncIterator]: () => iterator,
    async next(): Promise<IteratorResult<Buffer>> {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          if (queue.length === 0 && !ended && failure === null) stream.resume();
          return { value: chunk, done: false };
        }
        if (failure !== null) {
          stop();
          throw failure.error;
        }
        if (ended || stream.destroyed || stream.readableEnded) {
          stop();
          return { value: undefined, done: true };
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
    async return(): Promise<IteratorResult<Buffer>> {
      stop();
      return { value: undefined, done: true };
    },
  };
  return iterator;
}

function withLength(headers: Record<string, string>, body: string | Buffer): Record<string, string> {
  return { ...headers, 'content-length': String(Buffer.byteLength(body)) };
}

/** A socket error's code (`ECONNREFUSED`, `ENOTFOUND`, …), or a generic word. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : 'connection failed';
}

/** Follows an AbortSignal (an EventTarget listener) or a relay attempt (a plain callback). */
function follow(signal: Abortable, onAbort: () => void): () => void {
  if ('follow' in signal) return signal.follow(onAbort);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

function abortedError(label: string): UpstreamError {
  return new UpstreamError(`${label} request aborted`, false);
}

function lostError(label: string, error: unknown): UpstreamError {
  const reason = error instanceof Error ? `: ${error.message}` : '';
  return new UpstreamError(
    `${label} upstream closed the connection before the end of the answer${reason}`,
    true,
  );
}

/**
 * Splits a byte stream at LF without decoding partial UTF-8 sequences; a line longer than the limit
 * (counted in bytes, before its LF) makes `push` return false.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Appends the complete lines of `chunk` to `out`; false when a line is over the limit. */
  push(chunk: Buffer, out: string[]): boolean {
    let start = 0;
    let end = chunk.indexOf(10, start);
    while (end !== -1) {
      if (this.pendingBytes + end - start > this.maxLineBytes) return false;
      if (this.pendingBytes === 0) out.push(chunk.toString('utf8', start, end));
      else {
        this.pending.push(chunk.subarray(start, end));
        out.push(Buffer.concat(this.pending, this.pendingBytes + end - start).toString('utf8'));
        this.pending = [];
        this.pendingBytes = 0;
      }
      start = end + 1;
      end = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLineBytes) return false;
      this.pending.push(chunk.subarray(start));
    }
    return true;
  }

  /** The unterminated last line, if any. */
  flush(): string | null {
    if (this.pendingBytes === 0) return null;
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }
}

export interface SseEvent {
  /** The `event:` field; undefined for the default `message` event. */
  event: string | undefined;
  data: string;
}

/**
 * Server-sent events from lines: `data:` lines are joined by LF, `event:` names the event, comments
 * (`:`) and other fields are ignored, a blank line dispatches. A trailing CR (CRLF framing) is dropped.
 */
export class SseParser {
  private data: string[] = [];
  private event: string | undefined;

  /** Feeds one line; returns the event a blank line completes (or null). */
  push(rawLine: string): SseEvent | null {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    return null;
  }

  /** The event left when the stream ended without its blank line. */
  end(): SseEvent | null {
    return this.dispatch();
  }

  private dispatch(): SseEvent | null {
    if (this.data.length === 0) {
      this.event = undefined;
      return null;
    }
    const event: SseEvent = {
      event: this.event,
      data: this.data.length === 1 ? (this.data[0] as string) : this.data.join('\n'),
    };
    this.data = [];
    this.event = undefined;
    return event;
  }
}

/** Parses one JSON line/event; garbage becomes an `UpstreamError`. */
export function parseJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError(`${label} upstream sent invalid JSON: ${safeCause(text.slice(0, 120))}`, true);
  }
}

/** The request options of the registry's few upstream URLs, converted once (not per call). */
const targets = new WeakMap<URL, http.RequestOptions>();
function requestTarget(url: URL): http.RequestOptions {
  let target = targets.get(url);
  if (!target) {
    target = urlToHttpOptions(url);
    targets.set(url, target);
  }
  return target;
}

const joined = new Map<string, URL>();

/**
 * Joins a configured base URL (with or without a trailing slash or a path prefix) and a path. The
 * few combinations of the registry are parsed once (a URL per call cost ~5 % of a proxied request).
 */
export function joinUrl(base: string, path: string): URL {
  const key = `${base}\n${path}`;
  let url = joined.get(key);
  if (!url) {
    // The registry trims trailing slashes of configured URLs; one left here is dropped.
    url = new URL((base.endsWith('/') ? base.slice(0, -1) : base) + path);
    if (joined.size < 1_000) joined.set(key, url);
  }
  return url;
}

/** The message of an upstream error value: a string, `{message}`, or its JSON. */
export function upstreamErrorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return JSON.stringify(error);
}
