import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../core/errors.js';
import type { SlotStore, TakeResult } from './throttle-slots.js';

interface ThrottleOptions {
  /** Requests that may wait for a slot; one more is refused with 429. */
  queueMax: number;
  /** Used when the shared store fails (e.g. Redis down): per-process limiting goes on. */
  fallback?: SlotStore;
  onStoreError?: (error: unknown) => void;
}

/** Call when the request has been answered (or has failed): the slot then cools down. */
type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
  reject: (error: Error) => void;
}

/**
 * Outbound throttle to the game platform: a request takes a slot at once when one is free and
 * nobody waits; otherwise it joins a bounded FIFO queue that one pump drains as slots free up.
 * The upstream's own throttle hints pause the whole queue.
 */
export class OutboundThrottle {
  private readonly queue: Waiter[] = [];
  private pumping = false;
  private pausedUntil = 0;
  private readonly stop = new AbortController();

  constructor(
    private readonly store: SlotStore,
    private readonly options: ThrottleOptions,
  ) {}

  get waiting(): number {
    return this.queue.length;
  }

  async acquire(): Promise<Release> {
    if (this.stop.signal.aborted) throw closedError();
    if (this.queue.length === 0 && !this.pumping && Date.now() >= this.pausedUntil) {
      const taken = await this.take();
      if ('release' in taken) return taken.release;
    }
    if (this.queue.length >= this.options.queueMax) {
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        'Too many requests are waiting for the game platform; retry shortly',
        { queueMax: this.options.queueMax },
        { 'retry-after': '1' },
      );
    }
    return new Promise<Release>((resolve, reject) => {
      this.queue.push({ resolve, reject });
      void this.pump();
    });
  }

  /** Holds every request back for `ms` (the upstream asked us to slow down). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Refuses the waiting requests and hands back the slots this process still holds. */
  async close(): Promise<void> {
    this.stop.abort();
    for (const waiter of this.queue.splice(0)) waiter.reject(closedError());
    await this.store.flush?.().catch((error: unknown) => this.options.onStoreError?.(error));
  }

  private async take(): Promise<{ release: Release } | { waitMs: number }> {
    let store = this.store;
    let result: TakeResult;
    try {
      result = await store.tryTake();
    } catch (error) {
      this.options.onStoreError?.(error);
      if (!this.options.fallback) return { waitMs: 100 };
      store = this.options.fallback;
      result = await store.tryTake();
    }
    if ('waitMs' in result) return result;
    const { ticket } = result;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        store.release(ticket).catch((error: unknown) => this.options.onStoreError?.(error));
      },
    };
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.stop.signal.aborted) {
        const paused = this.pausedUntil - Date.now();
        const taken = paused > 0 ? { waitMs: paused } : await this.take();
        if ('release' in taken) {
          const waiter = this.queue.shift();
          if (waiter) waiter.resolve(taken.release);
          else taken.release();
        } else {
          await sleep(taken.waitMs, undefined, { signal: this.stop.signal }).catch(() => undefined);
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}

function closedError(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The platform is shutting down');
}
