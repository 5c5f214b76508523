import http from 'node:http';
import https from 'node:https';
import type { ServerResponse } from 'bungie-api-ts/core';
import { AppError } from '../../core/errors.js';
import { safeCause } from '../../core/redact.js';
import type { OutboundThrottle } from './outbound-throttle.js';
import type { GameSettings } from './settings.js';
import { AUTH_CODES, SUCCESS, THROTTLE_CODES } from './upstream-codes.js';
import { type PathSegment, upstreamPath } from './upstream-path.js';

export interface GameCall {
  /** GET unless stated; a POST sends `body` as JSON (or nothing). */
  method?: 'GET' | 'POST';
  body?: unknown;
  /** Segments of the path under GAME_API_URL, unencoded: the client encodes each one. */
  path: readonly PathSegment[];
  query?: Record<string, string | undefined>;
  /** The user's OAuth access token, for user-specific calls. */
  accessToken?: string;
}

/** The upstream refused the user's access token (an auth code or HTTP 401): renew and retry. */
export class GameTokenRejected extends Error {
  constructor(
    readonly upstreamCode: number,
    readonly httpStatus: number,
  ) {
    super(`The game platform refused the access token (code ${upstreamCode})`);
    this.name = 'GameTokenRejected';
  }
}

/** Retries after a throttle answer, and the longest upstream wait worth holding a request for. */
const THROTTLE_RETRIES = 3;
const MAX_THROTTLE_WAIT_MS = 10_000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 4_000;

type Envelope = Partial<ServerResponse<unknown>>;

/**
 * The typed client of the game platform: `X-API-Key` on every call, the outbound throttle
 * before every attempt, the envelope read on every answer (ErrorCode ≠ 1 is an error even on
 * HTTP 200), throttle answers retried after ThrottleSeconds or a bounded backoff.
 */
export class GameClient {
  /**
   * Kept-alive connections to the upstream, reused call after call: Node's own HTTP client, which
   * costs a third of the CPU `fetch` does per exchange (its WHATWG streams and request objects).
   */
  private readonly agent: http.Agent;

  constructor(
    private readonly settings: GameSettings,
    private readonly throttle: OutboundThrottle,
  ) {
    const secure = settings.apiUrl.startsWith('https:');
    // An idle connection closes after 4 s, before a server's usual 5 s (and sooner when the server's
    // Keep-Alive header says so): a call never goes out on a connection the server is closing.
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
    this.agent = secure ? new https.Agent(options) : new http.Agent(options);
  }

  /** Closes the idle connections (the platform closes). */
  close(): void {
    this.agent.destroy();
  }

  get<T>(call: GameCall): Promise<T> {
    return this.call<T>({ ...call, method: 'GET' });
  }

  async call<T>(call: GameCall): Promise<T> {
    // Built (and refused) before any slot is taken or anything is sent.
    const url = new URL(`${this.settings.apiUrl}${upstreamPath(call.path)}`);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    for (let attempt = 0; ; attempt += 1) {
      const release = await this.throttle.acquire();
      let answer: { status: number; envelope: Envelope };
      try {
        answer = await this.send(url, call);
      } finally {
        release();
      }
      const { status, envelope } = answer;
      const secrets = [this.settings.apiKey, call.accessToken];
      const code = Number(envelope.ErrorCode ?? 0);
      if (code === SUCCESS && status < 400) return envelope.Response as T;

      if (THROTTLE_CODES.has(code) || status === 429) {
        const seconds = Number(envelope.ThrottleSeconds ?? 0);
        const waitMs =
          seconds > 0 ? seconds * 1000 : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
        if (attempt >= THROTTLE_RETRIES || waitMs > MAX_THROTTLE_WAIT_MS) {
          // 503, not 502: the upstream is up but asks for time, and Retry-After says how long.
          throw upstreamError(
            status,
            envelope,
            'The game platform is throttling requests',
            secrets,
            { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
            'SERVICE_UNAVAILABLE',
          );
        }
        // Every request waits, not only this one: the upstream asked the application to slow down.
        this.throttle.pause(waitMs);
        continue;
      }
      if (call.accessToken && (AUTH_CODES.has(code) || status === 401)) {
        throw new GameTokenRejected(code, status);
      }
      throw upstreamError(status, envelope, 'The game platform answered with an error', secrets);
    }
  }

  /**
   * A content file the API points at (a manifest table: `/common/destiny2_content/json/...`),
   * on the API's own origin only and at most `maxBytes`: the path comes from an upstream answer.
   */
  async content(path: string, maxBytes: number): Promise<unknown> {
    const origin = new URL(this.settings.apiUrl).origin;
    const url = new URL(path, origin);
    if (url.origin !== origin) {
      throw new AppError('UPSTREAM_ERROR', 'The game platform pointed at content on another host', {
        reason: 'foreign_content_url',
      });
    }
    const release = await this.throttle.acquire();
    try {
      const timeoutMs = this.settings.timeoutMs * 4;
      const answer = await exchange(this.agent, url, {
        method: 'GET',
        headers: { 'x-api-key': this.settings.apiKey, accept: 'application/json' },
        timeoutMs,
        maxBytes,
        what: 'The content file',
      });
      if (answer.status < 200 || answer.status >= 300) {
        throw new AppError('UPSTREAM_ERROR', 'The game platform did not serve the content file', {
          httpStatus: answer.status,
        });
      }
      try {
        return JSON.parse(answer.text) as unknown;
      } catch {
        throw new AppError('UPSTREAM_ERROR', 'The content file is not JSON', { httpStatus: answer.status });
      }
    } finally {
      release();
    }
  }

  private async send(url: URL, call: GameCall): Promise<{ status: number; envelope: Envelope }> {
    const headers: Record<string, string> = { 'x-api-key': this.settings.apiKey, accept: 'application/json' };
    if (call.accessToken) headers.authorization = `Bearer ${call.accessToken}`;
    const method = call.method ?? 'GET';
    let body: string | undefined;
    if (method === 'POST' && call.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.body);
    }
    const answer = await exchange(this.agent, url, {
      method,
      headers,
      body,
      timeoutMs: this.settings.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      what: 'The game platform’s answer',
    });
    let envelope: Envelope;
    try {
      envelope = JSON.parse(answer.text) as Envelope;
    } catch {
      throw new AppError('UPSTREAM_ERROR', 'The game platform answered with something other than JSON', {
        httpStatus: answer.status,
      });
    }
    if (typeof envelope !== 'object' || envelope === null || !('ErrorCode' in envelope)) {
      throw new AppError('UPSTREAM_ERROR', 'The game platform answered without its envelope', {
        httpStatus: answer.status,
      });
    }
    return { status: answer.status, envelope };
  }
}

/** The largest API answer read (a full profile with every component is a few MB). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** Idle kept-alive connections to the upstream close after this long. */
const IDLE_SOCKET_MS = 4_000;

interface Exchange {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** For the whole exchange, answer read included. */
  timeoutMs: number;
  /** The answer is refused past this many bytes, without reading the rest. */
  maxBytes: number;
  what: string;
}

/**
 * One request on the agent's kept-alive connections, its answer read as text. Refused (502) when
 * the upstream cannot be reached, does not answer within `timeoutMs` or sends more than `maxBytes`;
 * an answer cut short reads as empty (the caller then finds no envelope).
 */
function exchange(agent: http.Agent, url: URL, x: Exchange): Promise<{ status: number; text: string }> {
  const transport = url.protocol === 'https:' ? https : http;
  const headers =
    x.body === undefined ? x.headers : { ...x.headers, 'content-length': String(Buffer.byteLength(x.body)) };
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | null, answer?: { status: number; text: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(answer as { status: number; text: string });
    };
    const request = transport.request(url, { method: x.method, headers, agent }, (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > x.maxBytes) {
          settle(
            new AppError('UPSTREAM_ERROR', `${x.what} is larger than ${x.maxBytes} bytes`, {
              reason: 'content_too_large',
            }),
          );
        } else chunks.push(chunk);
      });
      response.on('end', () => settle(null, { status, text: Buffer.concat(chunks).toString('utf8') }));
      // Cut short (the connection reset mid-answer): no answer to read.
      response.on('aborted', () => settle(null, { status, text: '' }));
      response.on('error', () => settle(null, { status, text: '' }));
    });
    const timer = setTimeout(() => {
      const timeout = new Error('timed out');
      timeout.name = 'TimeoutError';
      settle(unreachable(timeout, x.timeoutMs));
    }, x.timeoutMs);
    request.on('error', (error) => settle(unreachable(error, x.timeoutMs)));
    request.end(x.body);
  });
}

/** The upstream's error as the caller sees it: its codes, and its message without the keys it was sent. */
function upstreamError(
  status: number,
  envelope: Envelope,
  message: string,
  secrets: Array<string | undefined>,
  headers: Record<string, string> = {},
  code: 'UPSTREAM_ERROR' | 'SERVICE_UNAVAILABLE' = 'UPSTREAM_ERROR',
): AppError {
  return new AppError(
    code,
    message,
    {
      upstreamCode: Number(envelope.ErrorCode ?? 0),
      upstreamStatus: envelope.ErrorStatus ?? null,
      upstreamMessage: typeof envelope.Message === 'string' ? safeCause(envelope.Message, secrets) : null,
      httpStatus: status,
    },
    headers,
  );
}

/** Network failure or timeout: 502 saying which. */
export function unreachable(error: unknown, timeoutMs: number): AppError {
  const name = (error as { name?: string } | null)?.name;
  const timedOut = name === 'TimeoutError' || name === 'AbortError';
  return new AppError(
    'UPSTREAM_ERROR',
    timedOut
      ? `The game platform did not answer within ${timeoutMs} ms`
      : 'The game platform could not be reached',
    { reason: timedOut ? 'timeout' : 'unreachable', timeoutMs },
  );
}
