export interface WindowCount {
  /** Points counted in the current window, including this hit. */
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

/**
 * Fixed-window counters, never below zero (a hit of negative points gives back at most what is
 * counted). Every hit is one atomic increment (a Lua script on Redis, a
 * synchronous map update in-process), so N allowed means exactly N, never N+1. The in-process
 * store answers at once (no promise), so a request counted in memory never waits a turn.
 */
export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  hit(key: string, windowSeconds: number, points?: number): WindowCount | Promise<WindowCount>;
  peek(key: string, windowSeconds: number): WindowCount | null | Promise<WindowCount | null>;
  /**
   * Hits and peeks in order, as one atomic call (one Lua script on Redis: one round trip for all),
   * stopping after the first step whose count reaches its `stopAt`; the counts of the steps run.
   */
  steps(list: readonly CounterStep[]): StepCounts | Promise<StepCounts>;
}

/** One step of `CounterStore.steps`: a hit (of `points`, default 1) or a peek of a window. */
export interface CounterStep {
  op: 'hit' | 'peek';
  key: string;
  windowSeconds: number;
  points?: number;
  /** The steps after this one are not run when its count is at least this. */
  stopAt?: number;
  /**
   * The steps after this one are not run when the counts of the steps so far, this one's included
   * (a window that is not open counts 0), add up to at least this.
   */
  stopAtTotal?: number;
}

/** The counts of the steps run, in order (null: a peek of a window that is not open). */
export type StepCounts = Array<WindowCount | null>;

/** `steps` done by a store's own hit and peek, for in-process counters (each answers at once). */
export function stepsInOrder(
  list: readonly CounterStep[],
  hit: (key: string, windowSeconds: number, points?: number) => WindowCount,
  peek: (key: string, windowSeconds: number) => WindowCount | null,
): StepCounts {
  const counts: StepCounts = [];
  let total = 0;
  for (const step of list) {
    const count =
      step.op === 'hit' ? hit(step.key, step.windowSeconds, step.points) : peek(step.key, step.windowSeconds);
    counts.push(count);
    total += Math.max(0, count?.count ?? 0);
    if (step.stopAt !== undefined && (count?.count ?? 0) >= step.stopAt) break;
    if (step.stopAtTotal !== undefined && total >= step.stopAtTotal) break;
  }
  return counts;
}

interface MemoryWindow {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  endsAt: number;
}

const SWEEP_EVERY_MS = 10_000;

/** Fixed windows in a map; ended windows are swept now and then, on a hit that opens one. */
class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory' as const;
  private readonly windows = new Map<string, MemoryWindow>();
  private nextSweep = 0;

  hit(key: string, windowSeconds: number, points = 1): WindowCount {
    const id = `w${windowSeconds}:${key}`;
    const now = Date.now();
    const current = this.windows.get(id);
    if (current && current.endsAt > now) {
      current.count = Math.max(0, current.count + points);
      return { count: current.count, resetMs: current.endsAt - now };
    }
    if (now >= this.nextSweep) this.sweep(now);
    const endsAt = now + windowSeconds * 1000;
    const count = Math.max(0, points);
    this.windows.set(id, { count, endsAt });
    return { count, resetMs: endsAt - now };
  }

  peek(key: string, windowSeconds: number): WindowCount | null {
    const current = this.windows.get(`w${windowSeconds}:${key}`);
    const now = Date.now();
    return current && current.endsAt > now ? { count: current.count, resetMs: current.endsAt - now } : null;
  }

  steps(list: readonly CounterStep[]): StepCounts {
    return stepsInOrder(
      list,
      (key, windowSeconds, points) => this.hit(key, windowSeconds, points),
      (key, windowSeconds) => this.peek(key, windowSeconds),
    );
  }

  private sweep(now: number): void {
    this.nextSweep = now + SWEEP_EVERY_MS;
    for (const [id, window] of this.windows) if (window.endsAt <= now) this.windows.delete(id);
  }
}

export function memoryCounterStore(): CounterStore {
  return new MemoryCounterStore();
}
