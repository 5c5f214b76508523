import { decodeJwt } from 'jose';
import { hasScope, type Principal } from '../../core/auth/principal.js';
import type { AppContext } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { AgentEvent, AgentMessaging } from './agent-events.js';
import type { SocketGate, SocketIdentity } from './ws-auth.js';
import { CLOSE, type ClientMessage, parseClientMessage } from './ws-protocol.js';

/** What the connection uses of a `ws` WebSocket (the package ships no types of its own). */
export interface AgentSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): unknown;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown;
  on(event: 'ping', listener: () => void): unknown;
}

const OPEN = 1;
/** How often an open connection's credential is verified again (also before every send). */
const REVERIFY_EVERY_MS = 15_000;
const SHUTDOWN_GRACE_MS = 1_000;
/** setTimeout's ceiling: a later expiry is left to the periodic check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Payload = Record<string, unknown>;
/** A client message that runs a turn: a send, or approvals that continue a paused one. */
type Send = Extract<ClientMessage, { type: 'message.send' | 'run.approve' }>;
type Next = { done: false; event: AgentEvent } | { done: true } | { cancelled: true };

/** A send in flight: its abort, and a promise that settles when the client cancels it. */
interface InFlight {
  controller: AbortController;
  cancelled: Promise<{ cancelled: true }>;
}

interface ConnectionDeps {
  ctx: AppContext;
  gate: SocketGate;
  messaging: AgentMessaging;
}

/**
 * One client's connection: reads its messages, runs its sends (up to AGENT_WS_MAX_IN_FLIGHT at a
 * time), numbers what it sends back (`seq`), and ends it on idleness, a dead credential, a client
 * that does not read, or shutdown.
 */
export class AgentConnection {
  private seq = 0;
  private closed = false;
  private readonly inFlight = new Map<string, InFlight>();
  private idleTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly reverifyTimer: NodeJS.Timeout;

  constructor(
    private readonly socket: AgentSocket,
    private identity: SocketIdentity,
    private readonly deps: ConnectionDeps,
    private readonly onEnded: () => void,
  ) {
    socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    socket.on('ping', () => this.touch());
    socket.on('close', () => this.ended());
    this.reverifyTimer = setInterval(() => void this.reverify(), REVERIFY_EVERY_MS);
    this.reverifyTimer.unref();
    this.scheduleExpiry();
    this.touch();
  }

  /** Server shutdown: every send stops and the client is told to come back elsewhere (1001). */
  shutdown(): void {
    this.end(CLOSE.goingAway, 'server shutting down');
    // The close handshake of a client that does not answer would hold the server's close for
    // `ws`'s 30 s: a second is enough for one that does.
    setTimeout(() => this.socket.terminate(), SHUTDOWN_GRACE_MS).unref();
  }

  private receive(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    // A client past the buffered limit is being closed: nothing it sends is read any more.
    if (this.closed) return;
    this.touch();
    if (isBinary) {
      this.refuse('Binary messages are not accepted: send JSON text');
      return;
    }
    // `ws` hands Buffers (binaryType nodebuffer); fragments arrive joined.
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(new Uint8Array(data));
    const text = bytes.toString('utf8');
    const parsed = parseClientMessage(text);
    if (parsed.ok) this.dispatch(parsed.value);
    else this.refuse(parsed.refusal.message, parsed.refusal.clientMessageId);
  }

  private dispatch(message: ClientMessage): void {
    switch (message.type) {
      case 'ping':
        this.emit('pong', null, {});
        return;
      case 'message.cancel': {
        const running = this.inFlight.get(message.clientMessageId);
        if (running) running.controller.abort();
        else
          this.emit(
            'error',
            null,
            {
              code: 'NOT_FOUND',
              message: `No send '${message.clientMessageId}' is in flight`,
            },
            message.clientMessageId,
          );
        return;
      }
      case 'message.send':
      case 'run.approve':
        this.startSend(message);
        return;
    }
  }

  private startSend(message: Send): void {
    const { clientMessageId } = message;
    const conversationId = message.type === 'message.send' ? (message.conversationId ?? null) : null;
    if (this.inFlight.has(clientMessageId)) {
      this.refuse(`A send '${clientMessageId}' is already in flight`, clientMessageId);
      return;
    }
    const max = this.deps.ctx.config.AGENT_WS_MAX_IN_FLIGHT;
    if (this.inFlight.size >= max) {
      this.emit(
        'error',
        conversationId,
        {
          code: 'TOO_MANY_IN_FLIGHT',
          message: `At most ${max} sends may be in flight on a connection; wait for one to complete`,
        },
        clientMessageId,
      );
      return;
    }
    const controller = new AbortController();
    const cancelled = new Promise<{ cancelled: true }>((resolve) =>
      controller.signal.addEventListener('abort', () => resolve({ cancelled: true }), { once: true }),
    );
    this.inFlight.set(clientMessageId, { controller, cancelled });
    void this.runSend(message, { controller, cancelled })
      .catch((error: unknown) => this.deps.ctx.log.error({ err: error }, 'agent WebSocket send failed'))
      .finally(() => {
        this.inFlight.delete(clientMessageId);
        this.touch();
      });
  }

  private async runSend(message: Send, running: InFlight): Promise<void> {
    const { clientMessageId, agentId } = message;
    let conversationId = message.type === 'message.send' ? (message.conversationId ?? null) : null;
    const { signal } = running.controller;
    let events: AsyncGenerator<AgentEvent> | undefined;
    try {
      const principal = await this.reverify();
      if (!principal) return;
      if (!hasScope(principal, 'agent', 'write'))
        throw new AppError('FORBIDDEN', 'Missing scope agent:write', { requiredScope: 'agent:write' });
      // Approval is the account's oversight of its agents (as over HTTP): not a customer token's.
      if (message.type === 'run.approve' && principal.kind === 'customer_token')
        throw new AppError('FORBIDDEN', 'A customer token may not approve tool calls');
      await this.deps.gate.countRequest(principal);
      if (signal.aborted) return this.cancelledSend(conversationId, clientMessageId);
      if (message.type === 'run.approve') {
        events = await this.deps.messaging.approveRun(
          principal,
          agentId,
          message.runId,
          message.approvals,
          signal,
        );
      } else {
        const input = {
          content: message.content,
          ...(message.conversationId !== undefined ? { conversationId: message.conversationId } : {}),
        };
        events = await this.deps.messaging.send(principal, agentId, input, signal);
      }
      for (;;) {
        // A cancel answers at once, whether or not the turn notices its signal right away.
        const next: Next = await Promise.race([
          events.next().then((r): Next => (r.done ? { done: true } : { done: false, event: r.value })),
          running.cancelled,
        ]);
        if (this.closed) return;
        if ('cancelled' in next) return this.cancelledSend(conversationId, clientMessageId);
        if (next.done) return;
        conversationId = next.event.conversationId;
        this.forward(next.event, clientMessageId);
        if (next.event.type === 'message.created')
          this.emit('assistant.typing', conversationId, {}, clientMessageId);
      }
    } catch (error) {
      if (this.closed) return;
      if (signal.aborted) return this.cancelledSend(conversationId, clientMessageId);
      if (error instanceof AppError) {
        this.emit('error', conversationId, { code: error.code, message: error.message }, clientMessageId);
        return;
      }
      this.deps.ctx.log.error({ err: error, agentId }, 'agent WebSocket send failed');
      this.emit(
        'error',
        conversationId,
        { code: 'INTERNAL_ERROR', message: 'The turn failed' },
        clientMessageId,
      );
    } finally {
      // A turn left behind (cancel, close) is finished in the background; its signal has stopped it.
      if (events && (signal.aborted || this.closed)) void events.return(undefined).catch(() => undefined);
    }
  }

  private cancelledSend(conversationId: string | null, clientMessageId: string): void {
    this.emit(
      'error',
      conversationId,
      { code: 'CANCELLED', message: 'The send was cancelled' },
      clientMessageId,
    );
  }

  /** An event of a turn as a frame: a tool call's own id is `toolCallId` (`id` is the frame's). */
  private forward(event: AgentEvent, clientMessageId: string): void {
    const { type, conversationId, ...rest } = event;
    if (event.type === 'tool.call' || event.type === 'tool.result') {
      const { id, ...fields } = rest as Payload;
      this.emit(type, conversationId, { toolCallId: id, ...fields }, clientMessageId);
      return;
    }
    this.emit(type, conversationId, rest, clientMessageId);
  }

  private refuse(message: string, clientMessageId?: string): void {
    this.emit('error', null, { code: 'VALIDATION_ERROR', message }, clientMessageId);
  }

  /** Sends one frame: `{type, id, conversationId, seq, ts, clientMessageId?, ...payload}`. */
  private emit(
    type: string,
    conversationId: string | null,
    payload: Payload,
    clientMessageId?: string,
  ): void {
    if (this.closed || this.socket.readyState !== OPEN) return;
    const frame = {
      type,
      id: newId('evt'),
      conversationId,
      seq: ++this.seq,
      ts: this.deps.ctx.clock.now().toISOString(),
      ...(clientMessageId !== undefined ? { clientMessageId } : {}),
      ...payload,
    };
    this.socket.send(JSON.stringify(frame));
    // A client that does not read would have the server hold its frames without bound.
    if (this.socket.bufferedAmount > this.deps.ctx.config.AGENT_WS_MAX_BUFFERED_BYTES)
      this.end(CLOSE.policy, 'client is not reading: too much buffered');
  }

  /**
   * Verifies the credential again; a failure closes the connection with 4001 (null). Other errors
   * (the database away) leave it open: the next check decides.
   */
  private async reverify(): Promise<Principal | null> {
    if (this.closed) return null;
    try {
      const principal = await this.deps.gate.reverify(this.identity);
      this.identity = { ...this.identity, principal };
      return principal;
    } catch (error) {
      if (error instanceof AppError && error.code === 'UNAUTHORIZED') {
        this.end(CLOSE.unauthorized, error.message);
        return null;
      }
      this.deps.ctx.log.warn({ err: error }, 'agent WebSocket: credential check failed');
      return this.closed ? null : this.identity.principal;
    }
  }

  /** A timer to the moment the credential ends (a token's expiry, a rotated key's grace period). */
  private scheduleExpiry(): void {
    const { principal, headers } = this.identity;
    let endsAtMs = principal.credentialEndsAtMs ?? Number.POSITIVE_INFINITY;
    if (principal.kind === 'customer_token') {
      const token = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? '')?.[1];
      const exp = token ? decodeJwt(token).exp : undefined;
      if (exp !== undefined) endsAtMs = Math.min(endsAtMs, exp * 1000);
    }
    const delay = endsAtMs - this.deps.ctx.clock.now().getTime();
    if (!Number.isFinite(delay) || delay > MAX_TIMER_MS) return;
    this.expiryTimer = setTimeout(() => void this.reverify(), Math.max(0, delay) + 1);
    this.expiryTimer.unref();
  }

  /** Idle: no message from the client and nothing in flight for AGENT_WS_IDLE_TIMEOUT_MS. */
  private touch(): void {
    if (this.closed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.inFlight.size > 0) this.touch();
      else this.end(CLOSE.normal, 'idle timeout');
    }, this.deps.ctx.config.AGENT_WS_IDLE_TIMEOUT_MS);
    this.idleTimer.unref();
  }

  private end(code: number, reason: string): void {
    if (this.closed) return;
    this.stop();
    // A close reason is at most 123 bytes.
    this.socket.close(code, Buffer.from(reason).subarray(0, 123).toString('utf8'));
  }

  /** The socket closed (either side): every send in flight stops. */
  private ended(): void {
    if (!this.closed) this.stop();
    this.onEnded();
  }

  private stop(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.expiryTimer);
    clearInterval(this.reverifyTimer);
    for (const running of this.inFlight.values()) running.controller.abort();
  }
}
