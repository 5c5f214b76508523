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
  private readonly waitingBy = new Map<string, J[]>();
  private readonly runningBy = new Map<string, number>();
  /** Groups with waiting jobs, in turn order; a group served moves to the back. */
  private readonly ring: string[] = [];
  private size = 0;

  constructor(private readonly perGroup: number) {}

  get waiting(): number {
    return this.size;
  }

  push(group: string, job: J): void {
    let list = this.waitingBy.get(group);
    if (!list) {
      list = [];
      this.waitingBy.set(group, list);
      this.ring.push(group);
    }
    list.push(job);
    this.size++;
  }

  /** The next job to start (counted running in its group), or undefined when every group waits. */
  take(): { group: string; job: J } | undefined {
    for (let turn = 0; turn < this.ring.length; turn++) {
      const group = this.ring[turn] as string;
      if ((this.runningBy.get(group) ?? 0) >= this.perGroup) continue;
      const list = this.waitingBy.get(group) as J[];
      const job = list.shift() as J;
      this.size--;
      this.ring.splice(turn, 1);
      if (list.length > 0) this.ring.push(group);
      else this.waitingBy.delete(group);
      this.runningBy.set(group, (this.runningBy.get(group) ?? 0) + 1);
      return { group, job };
    }
    return undefined;
  }

  /** A job taken from `group` ended. */
  done(group: string): void {
    const left = (this.runningBy.get(group) ?? 1) - 1;
    if (left > 0) this.runningBy.set(group, left);
    else this.runningBy.delete(group);
  }

  clear(): void {
    this.waitingBy.clear();
    this.ring.length = 0;
    this.size = 0;
  }
}
