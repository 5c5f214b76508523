import { TenantTurns } from '../fairness/tenant-turns.js';

/** How a queue shares its slots between groups (a workflow execution's group is its account). */
export interface Fairness<T> {
  /** The job's group; jobs of one group share `perGroup` slots. */
  groupOf(data: T): string;
  /** Jobs of one group running at once per worker process (with Redis, counted across all of them). */
  perGroup: number;
}

/**
 * Waiting jobs by group, served round-robin: the next job comes from the next group in turn that
 * has a job waiting and fewer than `perGroup` running. One group's backlog therefore never delays
 * another group's job by more than one job per busy group, and never takes more than its share.
 */
export class FairOrder<J> {
  private readonly turns = new TenantTurns<J>();
  private readonly runningBy = new Map<string, number>();

  constructor(private readonly perGroup: number) {}

  get waiting(): number {
    return this.turns.waiting;
  }

  push(group: string, job: J): void {
    this.turns.push(group, job);
  }

  /** The next job to start (counted running in its group), or undefined when every group waits. */
  take(): { group: string; job: J } | undefined {
    const next = this.turns.take((group) => (this.runningBy.get(group) ?? 0) >= this.perGroup);
    if (!next) return undefined;
    this.runningBy.set(next.tenant, (this.runningBy.get(next.tenant) ?? 0) + 1);
    return { group: next.tenant, job: next.item };
  }

  /** A job taken from `group` ended. */
  done(group: string): void {
    const left = (this.runningBy.get(group) ?? 1) - 1;
    if (left > 0) this.runningBy.set(group, left);
    else this.runningBy.delete(group);
  }

  clear(): void {
    this.turns.drain();
  }
}
