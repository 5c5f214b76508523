import type { RedisHealth, RedisStatus } from '../queue/redis-health.js';
import {
  type CounterStep,
  type CounterStore,
  memoryCounterStore,
  type StepCounts,
  type WindowCount,
} from './counter-store.js';

interface FailoverEvents {
  /** Redis stopped answering (`down`) or answers again (`up`): counting moved accordingly. */
  onSwitch?(status: RedisStatus): void;
}

/**
 * Shared counters in Redis while it answers; while it does not, this process's own counters, so a
 * Redis outage limits per process instead of refusing every request or holding it (fail open to
 * per-process limits). Back on Redis as soon as it answers again; the windows counted in memory
 * meanwhile are not carried over (the shared counters may allow a little more for one window).
 */
export class FailoverCounterStore implements CounterStore {
  readonly kind = 'redis' as const;
  private readonly local = memoryCounterStore();

  constructor(
    private readonly shared: CounterStore,
    private readonly health: RedisHealth,
    events: FailoverEvents = {},
  ) {
    health.subscribe((status) => events.onSwitch?.(status));
  }

  hit(key: string, windowSeconds: number, points = 1): WindowCount | Promise<WindowCount> {
    if (this.health.status === 'down')
      return this.countLocally(() => this.local.hit(key, windowSeconds, points));
    return this.attempt(
      () => this.shared.hit(key, windowSeconds, points),
      () => this.local.hit(key, windowSeconds, points),
    );
  }

  peek(key: string, windowSeconds: number): WindowCount | null | Promise<WindowCount | null> {
    if (this.health.status === 'down') return this.countLocally(() => this.local.peek(key, windowSeconds));
    return this.attempt(
      () => this.shared.peek(key, windowSeconds),
      () => this.local.peek(key, windowSeconds),
    );
  }

  steps(list: readonly CounterStep[]): StepCounts | Promise<StepCounts> {
    if (this.health.status === 'down') return this.countLocally(() => this.local.steps(list));
    return this.attempt(
      () => this.shared.steps(list),
      () => this.local.steps(list),
    );
  }

  private async attempt<T>(remote: () => T | Promise<T>, local: () => T | Promise<T>): Promise<T> {
    try {
      return await remote();
    } catch {
      // The command timed out or the connection is gone: this request is counted here, and the
      // next ones too until the health probe hears Redis again.
      this.health.failed();
      return this.countLocally(local);
    }
  }

  private countLocally<T>(local: () => T): T {
    this.health.localLimitHits++;
    return local();
  }
}
