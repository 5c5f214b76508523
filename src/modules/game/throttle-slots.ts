/** A granted slot, to release when its request has been answered (or failed). */
export type Ticket = string;
export type TakeResult = { ticket: Ticket } | { waitMs: number };

/**
 * Where outbound slots are counted: at most `limit` per `windowMs`. A slot is held while its
 * request is in flight and for a whole window after it was answered. The upstream sees the
 * request at some moment between grant and answer, so two requests on the same slot always
 * arrive at least one window apart, whatever the network latency: no 1-second window of
 * arrivals can hold more than `limit` requests.
 */
export interface SlotStore {
  readonly kind: 'memory' | 'redis';
  tryTake(): Promise<TakeResult>;
  release(ticket: Ticket): Promise<void>;
  /** Sends releases still queued in this process (before it closes). */
  flush?(): Promise<void>;
}

/** While every slot is in flight, the next one frees up at an unknown time: look again this often. */
export const POLL_MS = 20;

/** In-process slots: the answer time of each request (Infinity while in flight). */
export class LocalSlots implements SlotStore {
  readonly kind = 'memory';
  private readonly slots = new Map<Ticket, number>();
  private counter = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Synchronous inside, so concurrent callers in one process can never both take the last slot. */
  async tryTake(): Promise<TakeResult> {
    const now = this.now();
    let oldest = Number.POSITIVE_INFINITY;
    for (const [ticket, answeredAt] of this.slots) {
      if (answeredAt <= now - this.windowMs) this.slots.delete(ticket);
      else oldest = Math.min(oldest, answeredAt);
    }
    if (this.slots.size < this.limit) {
      this.counter += 1;
      const ticket = `l${this.counter}`;
      this.slots.set(ticket, Number.POSITIVE_INFINITY);
      return { ticket };
    }
    if (oldest === Number.POSITIVE_INFINITY) return { waitMs: POLL_MS };
    return { waitMs: Math.max(1, Math.ceil(oldest + this.windowMs - now)) };
  }

  async release(ticket: Ticket): Promise<void> {
    if (this.slots.has(ticket)) this.slots.set(ticket, this.now());
  }
}
