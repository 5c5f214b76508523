import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** How long a lease lasts without renewal, and how often the holder renews it (others ask as often). */
const LEASE_MS = 15_000;
const RENEW_MS = 5_000;

const RENEW =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * Which of the processes subscribed for one trigger passes messages on: a message reaches every
 * subscriber, so without it each worker would start an execution. A key with a short expiry in the
 * watched Redis; a holder that dies loses it within LEASE_MS. A server that refuses the write (a
 * read-only ACL) leaves every process leading, as n8n's single process would.
 */
export class Lease {
  private readonly token = randomUUID();
  private held = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly warn: (err: unknown) => void,
  ) {}

  get leading(): boolean {
    return this.held;
  }

  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), RENEW_MS);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      if (this.held) {
        this.held = (await this.redis.eval(RENEW, 1, this.key, this.token, LEASE_MS)) === 1;
        if (this.held) return;
      }
      this.held = (await this.redis.set(this.key, this.token, 'PX', LEASE_MS, 'NX')) === 'OK';
    } catch (err) {
      this.held = true;
      this.warn(err);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (!this.held) return;
    this.held = false;
    await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
  }
}
