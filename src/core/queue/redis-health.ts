import type { Redis } from 'ioredis';

export type RedisStatus = 'up' | 'down';

const PROBE_EVERY_MS = 1_000;

/**
 * Whether a Redis client gets answers, probed with PING every second (a stopped server keeps the
 * socket open and just never answers, so the connection's own state cannot tell). One per client,
 * shared by whoever asks (`redisHealthOf`): the rate limiters, the webhook waiters, /health.
 */
export class RedisHealth {
  private current: RedisStatus = 'up';
  private since = Date.now();
  private readonly listeners = new Set<(status: RedisStatus) => void>();
  private timer: NodeJS.Timeout | null = null;
  private probing = false;
  /** Rate-limit hits counted in this process's memory because Redis did not answer (a metric). */
  localLimitHits = 0;

  constructor(
    private readonly client: Redis,
    private readonly timeoutMs: number,
  ) {
    // The connection's own events settle it sooner when they can: a refused or dropped connection.
    client.on('close', () =>
      // A quit (shutdown) closes too, then ends: only a close that will reconnect is an outage.
      setImmediate(() => {
        if (client.status !== 'end') this.set('down');
      }),
    );
    client.on('ready', () => void this.probe());
    client.on('end', () => this.stop());
    this.timer = setInterval(() => void this.probe(), PROBE_EVERY_MS);
    this.timer.unref();
  }

  get status(): RedisStatus {
    return this.current;
  }

  /** Milliseconds since the status last changed. */
  get forMs(): number {
    return Date.now() - this.since;
  }

  /** Told of every change; returns the unsubscriber. */
  subscribe(listener: (status: RedisStatus) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** A command failed for want of Redis (a timeout, a closed connection): down until a probe answers. */
  failed(): void {
    this.set('down');
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    // Not connected: a PING would only wait in the offline queue.
    if (this.client.status !== 'ready') {
      this.set('down');
      return;
    }
    this.probing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('Redis did not answer PING')), this.timeoutMs);
      });
      await Promise.race([this.client.ping(), late]);
      this.set('up');
    } catch {
      this.set('down');
    } finally {
      clearTimeout(timer);
      this.probing = false;
    }
  }

  private set(status: RedisStatus): void {
    if (status === this.current) return;
    this.current = status;
    this.since = Date.now();
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch {
        // A listener's failure is its own; the others are still told.
      }
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

const healths = new WeakMap<Redis, RedisHealth>();

/** The health of a client, started on first ask; it stops probing when the client quits. */
export function redisHealthOf(client: Redis, timeoutMs = 2_000): RedisHealth {
  let health = healths.get(client);
  if (!health) {
    health = new RedisHealth(client, timeoutMs);
    healths.set(client, health);
  }
  return health;
}
