/**
 * Waiting work by tenant (an account), served in turn: the next item comes from the tenant that has
 * waited longest for a turn, which then goes to the back. A tenant passed over (`skip`: it holds its
 * share of slots) keeps its place. The worker pools (CPU, sandbox) and the in-process queue share it,
 * so one tenant's backlog delays another's item by at most one item per busy tenant.
 */
export class TenantTurns<T> {
  /** Insertion order is turn order; a tenant with nothing waiting has no entry. */
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  /** Items waiting, all tenants together. */
  get waiting(): number {
    return this.count;
  }

  /** Items `tenant` has waiting. */
  waitingFor(tenant: string): number {
    return this.queues.get(tenant)?.length ?? 0;
  }

  /** The tenants with items waiting, in turn order (the next to go first). */
  tenants(): string[] {
    return [...this.queues.keys()];
  }

  /**
   * Whether one more item of `tenant` may wait, within `max` items in all and `perTenant` each. When all
   * `max` wait, the tenant waiting with the most gives up its newest item (returned as `evicted`, for the
   * caller to refuse) unless that is `tenant` itself or holds no more than it: one tenant filling the
   * queue is refused its excess, never another tenant its first item.
   */
  admit(tenant: string, max: number, perTenant = max): { admitted: boolean; evicted?: T } {
    const own = this.waitingFor(tenant);
    if (own >= perTenant) return { admitted: false };
    if (this.count < max) return { admitted: true };
    const largest = this.largest();
    if (!largest || largest.waiting <= own + 1) return { admitted: false };
    return { admitted: true, evicted: this.popNewest(largest.tenant) };
  }

  push(tenant: string, item: T): void {
    const queue = this.queues.get(tenant);
    if (queue) queue.push(item);
    else this.queues.set(tenant, [item]);
    this.count++;
  }

  /** The next item in turn, skipping (in place) the tenants `skip` names; undefined when none may go. */
  take(skip?: (tenant: string) => boolean): { tenant: string; item: T } | undefined {
    for (const [tenant, queue] of this.queues) {
      if (skip?.(tenant)) continue;
      const item = queue.shift() as T;
      this.queues.delete(tenant);
      if (queue.length > 0) this.queues.set(tenant, queue);
      this.count--;
      return { tenant, item };
    }
    return undefined;
  }

  /** Drops a waiting item (an aborted call); false when it was not waiting. */
  remove(tenant: string, item: T): boolean {
    const queue = this.queues.get(tenant);
    const at = queue?.indexOf(item) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(tenant);
    this.count--;
    return true;
  }

  /** The tenant with the most items waiting (the first in turn on a tie). */
  largest(): { tenant: string; waiting: number } | undefined {
    let largest: { tenant: string; waiting: number } | undefined;
    for (const [tenant, queue] of this.queues)
      if (!largest || queue.length > largest.waiting) largest = { tenant, waiting: queue.length };
    return largest;
  }

  /** Takes `tenant`'s newest waiting item out of turn (to refuse it). */
  popNewest(tenant: string): T | undefined {
    const queue = this.queues.get(tenant);
    const item = queue?.pop();
    if (queue?.length === 0) this.queues.delete(tenant);
    if (item !== undefined) this.count--;
    return item;
  }

  /** Every waiting item, oldest turn first; none waits afterwards. */
  drain(): T[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.count = 0;
    return all;
  }
}
