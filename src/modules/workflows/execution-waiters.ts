import type { Redis } from 'ioredis';

/**
 * Webhook calls waiting for their execution's answer. The worker that finishes an execution
 * notifies here; with Redis the news crosses processes (API nodes and `platform worker`s).
 */
export class ExecutionWaiters {
  private readonly waiting = new Map<string, Set<(response: string | null) => void>>();
  private subscriber: Redis | null = null;
  private onStop: ((executionId: string) => void) | null = null;

  constructor(
    private readonly redis: Redis | null,
    private readonly channel: string,
  ) {}

  async start(): Promise<void> {
    if (!this.redis || this.subscriber) return;
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('message', (channel, message: string) => {
      if (channel === this.stopChannel) {
        this.onStop?.(message);
        return;
      }
      const cut = message.indexOf('\n');
      this.settle(message.slice(0, cut), message.slice(cut + 1) || null);
    });
    await this.subscriber.subscribe(this.channel, this.stopChannel);
  }

  private get stopChannel(): string {
    return `${this.channel}:stop`;
  }

  /** Who hears that an execution was stopped through the API (the runner of this process). */
  listenStops(handler: (executionId: string) => void): void {
    this.onStop = handler;
  }

  /** Tells every process (this one at once, the others over Redis) that an execution was stopped. */
  async stop(executionId: string): Promise<void> {
    this.onStop?.(executionId);
    if (this.redis) await this.redis.publish(this.stopChannel, executionId);
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

  /** Called by the worker when an execution stops. */
  async notify(executionId: string, response: string | null): Promise<void> {
    if (this.waiting.has(executionId)) {
      this.settle(executionId, response);
      return;
    }
    if (this.redis) await this.redis.publish(this.channel, `${executionId}\n${response ?? ''}`);
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
    for (const id of [...this.waiting.keys()]) this.settle(id, null);
    if (this.subscriber) await this.subscriber.quit().catch(() => undefined);
  }
}
