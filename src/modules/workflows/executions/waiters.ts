import type { Redis } from 'ioredis';
import { type RedisHealth, redisHealthOf } from '../../../core/queue/redis-health.js';

/** Where an execution stands, as the database says (status and stored answer). */
interface StoredOutcome {
  id: string;
  status: string;
  response: string | null;
}

export interface WaitersOptions {
  /**
   * Reads executions' outcomes from the database: a waiter whose Redis message was lost (an outage,
   * a reconnect between publish and subscribe) is answered from there.
   */
  read?: (ids: string[]) => Promise<StoredOutcome[]>;
  /** Redis's command bound (REDIS_COMMAND_TIMEOUT_MS), for the health probe. */
  commandTimeoutMs?: number;
  onError?: (error: unknown, what: string) => void;
}

/** How often waiters re-read the database while Redis is down or just back; 5 times slower otherwise. */
const POLL_MS = 1_000;
const CALM_EVERY = 5;
/** Rows per read: far below SQLite's bound on statement variables. */
const READ_CHUNK = 500;
/** After Redis is back, waiters are re-read at the fast pace this long (resubscribes take a moment). */
const RECOVERY_MS = 10_000;

/** Statuses from which no answer is coming any more (a `waiting` run stored its 202 already). */
const ENDED = new Set(['success', 'error', 'canceled']);

/**
 * Webhook calls waiting for their execution's answer. The worker that finishes an execution
 * notifies here; with Redis the news crosses processes (API nodes and `platform worker`s). News can
 * be lost (a Redis outage or restart drops pub/sub messages), so with Redis the waiters also read
 * the database now and then, every second while Redis is down or just back: no waiter outlives its
 * execution's end by more than that.
 */
export class ExecutionWaiters {
  private readonly waiting = new Map<string, Set<(response: string | null) => void>>();
  /** Streamed answers' callers, by execution: each chunk (one JSON line) as the execution sends it. */
  private readonly streams = new Map<string, (line: string) => void>();
  private subscriber: Redis | null = null;
  private onStop: ((executionId: string) => void) | null = null;
  private readonly health: RedisHealth | null;
  private poller: NodeJS.Timeout | null = null;
  private ticks = 0;
  private polling = false;

  constructor(
    private readonly redis: Redis | null,
    private readonly channel: string,
    private readonly options: WaitersOptions = {},
  ) {
    this.health = redis ? redisHealthOf(redis, options.commandTimeoutMs) : null;
  }

  async start(): Promise<void> {
    if (!this.redis || this.subscriber) return;
    this.subscriber = this.redis.duplicate();
    // Errors of a reconnecting subscriber are the health probe's news; unheard they would throw.
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel, message: string) => {
      if (channel === this.stopChannel) {
        this.onStop?.(message);
        return;
      }
      if (channel === this.chunkChannel) {
        const at = message.indexOf('\n');
        this.streams.get(message.slice(0, at))?.(message.slice(at + 1));
        return;
      }
      const cut = message.indexOf('\n');
      this.settle(message.slice(0, cut), message.slice(cut + 1) || null);
    });
    // ioredis subscribes again on every reconnect; what was published meanwhile is read back.
    this.subscriber.on('ready', () => void this.recheck());
    this.health?.subscribe((status) => {
      if (status === 'up') void this.recheck();
    });
    await this.subscriber.subscribe(this.channel, this.stopChannel, this.chunkChannel);
    if (this.options.read) {
      this.poller = setInterval(() => {
        this.ticks++;
        if (this.degraded() || this.ticks % CALM_EVERY === 0) void this.recheck();
      }, POLL_MS);
      this.poller.unref();
    }
  }

  /** Redis does not answer (the health probe): the queue cannot take or hand out jobs now. */
  redisDown(): boolean {
    return this.health?.status === 'down';
  }

  private degraded(): boolean {
    return this.health !== null && (this.health.status === 'down' || this.health.forMs < RECOVERY_MS);
  }

  private get stopChannel(): string {
    return `${this.channel}:stop`;
  }

  private get chunkChannel(): string {
    return `${this.channel}:chunk`;
  }

  /**
   * A streamed answer's caller listens to its execution's chunks (one caller per execution: the
   * webhook call that started it). The returned function stops listening (the answer ended or the
   * client went away); the execution goes on either way.
   */
  listenChunks(executionId: string, onLine: (line: string) => void): () => void {
    this.streams.set(executionId, onLine);
    return () => {
      if (this.streams.get(executionId) === onLine) this.streams.delete(executionId);
    };
  }

  /**
   * An execution sent a chunk: to its caller in this process at once, else over Redis (a `platform
   * worker` runs it). Publishes in order on one connection, so the caller reads them in order, and
   * before the execution's end (`notify`, the same connection). Never fails: a lost chunk is only
   * missing from the stream, the execution's stored outcome is whole.
   */
  chunk(executionId: string, line: string): void {
    const local = this.streams.get(executionId);
    if (local) {
      local(line);
      return;
    }
    if (this.redis) void this.publish(this.chunkChannel, `${executionId}\n${line}`);
  }

  /** Who hears that an execution was stopped through the API (the runner of this process). */
  listenStops(handler: (executionId: string) => void): void {
    this.onStop = handler;
  }

  /** Tells every process (this one at once, the others over Redis) that an execution was stopped. */
  async stop(executionId: string): Promise<void> {
    this.onStop?.(executionId);
    if (this.redis) await this.publish(this.stopChannel, executionId);
  }

  /** Resolves with the stored response JSON, or null when `timeoutMs` passes first. */
  wait(executionId: string, timeoutMs: number): { promise: Promise<string | null>; cancel(): void } {
    let timer: NodeJS.Timeout | undefined;
    let done: ((response: string | null) => void) | undefined;
    const promise = new Promise<string | null>((resolve) => {
      done = resolve;
      const set = this.waiting.get(executionId) ?? new Set();
      set.add(resolve);
      this.waiting.set(executionId, set);
      timer = setTimeout(() => this.drop(executionId, resolve), timeoutMs);
      timer.unref();
    }).finally(() => clearTimeout(timer));
    return { promise, cancel: () => done && this.drop(executionId, done) };
  }

  /**
   * Called by the worker when an execution stops. Never fails: the outcome is in the database
   * already, where a waiter that missed this news reads it.
   */
  async notify(executionId: string, response: string | null): Promise<void> {
    if (this.waiting.has(executionId)) {
      this.settle(executionId, response);
      return;
    }
    if (this.redis) await this.publish(this.channel, `${executionId}\n${response ?? ''}`);
  }

  private async publish(channel: string, message: string): Promise<void> {
    try {
      await this.redis?.publish(channel, message);
    } catch (error) {
      this.options.onError?.(error, 'publish');
    }
  }

  /** Answers the waiters whose execution ended (or answered early) from the database. */
  private async recheck(): Promise<void> {
    const read = this.options.read;
    if (!read || this.polling || this.waiting.size === 0) return;
    this.polling = true;
    try {
      const ids = [...this.waiting.keys()];
      for (let i = 0; i < ids.length; i += READ_CHUNK) {
        const chunk = ids.slice(i, i + READ_CHUNK);
        const rows = await read(chunk);
        const found = new Map(rows.map((r) => [r.id, r]));
        for (const id of chunk) {
          const row = found.get(id);
          if (row?.response) this.settle(id, row.response);
          else if (row && ENDED.has(row.status)) this.settle(id, null);
        }
      }
    } catch (error) {
      // The database is down too: the next tick tries again.
      this.options.onError?.(error, 'recheck');
    } finally {
      this.polling = false;
    }
  }

  private settle(executionId: string, response: string | null): void {
    const set = this.waiting.get(executionId);
    if (!set) return;
    this.waiting.delete(executionId);
    for (const resolve of set) resolve(response);
  }

  /** One waiter gives up (timeout or cancel): it resolves with null, the others keep waiting. */
  private drop(executionId: string, resolve: (response: string | null) => void): void {
    const set = this.waiting.get(executionId);
    if (set?.delete(resolve)) {
      if (set.size === 0) this.waiting.delete(executionId);
      resolve(null);
    }
  }

  async close(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    for (const id of [...this.waiting.keys()]) this.settle(id, null);
    this.streams.clear();
    if (this.subscriber) await this.subscriber.quit().catch(() => undefined);
  }
}
