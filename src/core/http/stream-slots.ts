import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { errorBody } from './error-handler.js';

/**
 * Long-lived connections (agent WebSockets, SSE and NDJSON streams) each hold a socket, a file
 * descriptor and some memory for as long as the client likes. Without a bound, one key opening
 * thousands of them exhausts the process's file limit and `/health` itself is refused. Slots are
 * counted per holder (a key, a customer token's customer, a session's account, else a client
 * address) and per process, and the process bound leaves a reserve of descriptors below the file
 * limit for ordinary requests.
 */
export class StreamSlots {
  private readonly held = new Map<string, number>();
  private total = 0;

  constructor(
    readonly perHolder: number,
    readonly perProcess: number,
  ) {}

  /** Takes a slot for `holder`; throws 429 when the holder or the process is at its bound. */
  acquire(holder: string): () => void {
    const mine = this.held.get(holder) ?? 0;
    if (mine >= this.perHolder)
      throw full(`Too many open streams for this credential (at most ${this.perHolder})`);
    if (this.total >= this.perProcess) throw full('The server has no stream slot free');
    this.held.set(holder, mine + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.held.get(holder) ?? 1) - 1;
      if (left > 0) this.held.set(holder, left);
      else this.held.delete(holder);
    };
  }

  /** Slots taken now, in the process or by one holder. */
  open(holder?: string): number {
    return holder === undefined ? this.total : (this.held.get(holder) ?? 0);
  }
}

const RETRY_AFTER_SECONDS = 5;

function full(message: string): AppError {
  return new AppError('RATE_LIMIT_EXCEEDED', message, {}, { 'retry-after': String(RETRY_AFTER_SECONDS) });
}

/** Whose slots a connection takes: the key (one customer of it, for a token), else the caller's address. */
export function streamHolder(principal: Principal | null | undefined, ip: string): string {
  if (!principal) return `ip:${ip}`;
  if (principal.kind === 'customer_token') return `token:${principal.keyId}:${principal.customerId}`;
  if (principal.keyId) return `key:${principal.keyId}`;
  return `account:${principal.accountId}`;
}

/** The soft limit on open files of this process, where the platform can read it (Linux). */
function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const value = soft === undefined ? Number.NaN : Number(soft);
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

const AUTO_CAP = 10_000;

/**
 * The process bound: the configured one, or (0) the file limit less the reserve, at most 10,000
 * and at least 16; an unknown file limit (not Linux) means 10,000 less the reserve.
 */
export function processStreamCap(configured: number, reserve: number, limit = openFileLimit()): number {
  const auto = Math.max(16, Math.min(AUTO_CAP, (limit ?? AUTO_CAP) - reserve));
  return configured > 0 ? Math.min(configured, auto) : auto;
}

const STREAM_TYPES = /^(text\/event-stream|application\/x-ndjson)\b/i;

declare module 'fastify' {
  interface FastifyRequest {
    /** The process's stream slots; see holdStreamSlot. */
    readonly streamSlots: StreamSlots | null;
  }
}

/** Requests that hold a slot already (taken by the route before it started work). */
const holding = new WeakSet<FastifyRequest>();

/**
 * Takes the request's stream slot now, before the route starts the work it will stream (an upstream
 * call, an agent turn): a refusal is then a 429 with nothing started. The slot is given back when the
 * response's connection closes, whatever the route answers in the end.
 */
export function holdStreamSlot(request: FastifyRequest, reply: FastifyReply): void {
  // A response already closed (the client went while the route worked) would never give it back.
  if (!request.streamSlots || holding.has(request) || reply.raw.destroyed) return;
  const release = request.streamSlots.acquire(streamHolder(request.principal, request.ip));
  holding.add(request);
  reply.raw.once('close', release);
}

/**
 * Every streamed answer (SSE or NDJSON from any route) holds a slot from before its first byte until
 * its connection closes. Routes that start work first take it with holdStreamSlot; for any other the
 * hook takes it here, and a refused stream is a 429 in the route's error format whose producer is
 * destroyed unread.
 */
export function registerStreamSlots(app: FastifyInstance, slots: StreamSlots): void {
  // A getter, not an onRequest hook: nothing added to every request's path.
  app.decorateRequest('streamSlots', {
    getter: () => slots,
  });
  // A callback hook, not an async one: no promise on every response's path.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!(payload instanceof Readable) || holding.has(request)) return done(null, payload);
    if (!STREAM_TYPES.test(String(reply.getHeader('content-type') ?? ''))) return done(null, payload);
    try {
      holdStreamSlot(request, reply);
    } catch (error) {
      payload.destroy();
      const refusal = error as AppError;
      reply.code(refusal.status);
      for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
      reply.removeHeader('cache-control');
      reply.header('content-type', 'application/json; charset=utf-8');
      const format = request.routeOptions.config?.errorFormat ?? 'platform';
      return done(null, JSON.stringify(errorBody(format, refusal, request.id)));
    }
    done(null, payload);
  });
}
