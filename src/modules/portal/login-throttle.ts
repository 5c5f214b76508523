import { tooMany } from '../../core/http/auth-hook.js';
import { rateLimitClient } from '../../core/http/ip-rules.js';
import type { LimitDecision, Limiter } from '../../core/limits/limiter.js';

interface LoginLimits {
  /** Failures of one email from one client address before that pair waits. */
  perEmail: number;
  /** Failures from one client address, whatever the email, before it is refused for the window. */
  perIp: number;
  windowSeconds: number;
  /** The longest wait one email imposes on every client (distributed guessing). */
  emailMaxDelaySeconds: number;
}

/** Failures of one email from all clients before every client waits: five times a pair's allowance. */
const EMAIL_WIDE_FACTOR = 5;

interface Counter {
  name: string;
  free: number;
  maxDelaySeconds: number;
}

/**
 * Failed sign-ins slow the guesser down without letting anyone lock a member out. A client that
 * fails for one email waits progressively (1 s, 2 s, 4 s … up to the window) once past its free
 * attempts; the same email failing from many clients makes every client wait, but briefly (at most
 * `emailMaxDelaySeconds`), so the member can always sign in soon; a client failing across many
 * emails is refused for the window. A wait is a 429 with Retry-After, answered before any hashing.
 */
export class LoginThrottle {
  constructor(
    private readonly limiter: Limiter,
    private readonly limits: LoginLimits,
  ) {}

  /** Throws 429 when the client or the email must still wait. */
  async check(email: string, ip: string): Promise<void> {
    const { limiter, limits } = this;
    const client = rateLimitClient(ip);
    if (limits.perIp > 0) {
      const decision = await limiter.readWindow(`login:ip:${client}`, limits.perIp, limits.windowSeconds);
      if (!decision.allowed) throw tooMany(decision, 'Too many failed sign-ins from this address');
    }
    for (const counter of this.delayed(email, client)) {
      const wait = await this.waiting(counter);
      if (wait) throw tooMany(wait, 'Too many failed sign-ins; wait before trying again');
    }
  }

  /** Counts a failure; past a counter's free attempts, its next attempt waits. */
  async failed(email: string, ip: string): Promise<void> {
    const { limiter, limits } = this;
    const client = rateLimitClient(ip);
    if (limits.perIp > 0) await limiter.hitWindow(`login:ip:${client}`, limits.perIp, limits.windowSeconds);
    for (const counter of this.delayed(email, client)) {
      const hit = await limiter.hitWindow(counter.name, Number.MAX_SAFE_INTEGER, limits.windowSeconds);
      const count = hit.limit - hit.remaining;
      if (count < counter.free) continue;
      const delay = delayOf(count, counter);
      await limiter.hitWindow(`${counter.name}:wait:${count}`, 1, delay);
    }
  }

  private delayed(email: string, client: string): Counter[] {
    const { perEmail, windowSeconds, emailMaxDelaySeconds } = this.limits;
    if (perEmail <= 0) return [];
    return [
      { name: `login:pair:${email}|${client}`, free: perEmail, maxDelaySeconds: windowSeconds },
      {
        name: `login:email:${email}`,
        free: perEmail * EMAIL_WIDE_FACTOR,
        maxDelaySeconds: emailMaxDelaySeconds,
      },
    ];
  }

  /** The running wait of a counter, if any: the one its latest failure started. */
  private async waiting(counter: Counter): Promise<LimitDecision | null> {
    const { limiter, limits } = this;
    const failures = await limiter.readWindow(counter.name, Number.MAX_SAFE_INTEGER, limits.windowSeconds);
    const count = failures.limit - failures.remaining;
    if (count < counter.free) return null;
    const wait = await limiter.readWindow(`${counter.name}:wait:${count}`, 1, delayOf(count, counter));
    return wait.allowed ? null : wait;
  }
}

/** 1 s at the first failure past the free ones, doubling, at most the counter's maximum. */
function delayOf(count: number, counter: Counter): number {
  return Math.min(counter.maxDelaySeconds, 2 ** Math.min(30, count - counter.free));
}
