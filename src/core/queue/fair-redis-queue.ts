import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Fairness } from './fair-order.js';
import { type JobDefinition, JobPayloadError } from './job-definition.js';
import {
  type JobHandler,
  type JobObserver,
  type JobQueue,
  mayRetry,
  notifyObserver,
  runJob,
} from './job-queue.js';
import { boundedAdd } from './queue-unavailable.js';
import { blockingRedisOptions, redisOptions } from './redis-options.js';

interface FairRedisQueueOptions<T> {
  redisUrl: string;
  prefix: string;
  /** The job's declaration (jobs.ts): its name, payload schema, timeout and attempts. */
  job: JobDefinition<T>;
  onError: (error: unknown, jobId: string) => void;
  observer?: JobObserver;
  fairness: Fairness<T>;
  /** A lease's lifetime unrenewed: how soon a dead process's job goes to another (default 30 s). */
  stallSeconds?: number;
  /** Longest a command (an add) may take before Redis counts as unreachable (default 2 s). */
  commandTimeoutMs?: number;
}

/*
 * Keys under `{prefix}:{name}:fair:` — `jobs` (hash: id → {d: payload, t: added at, a: attempt}), `p:{group}` (list: waiting ids),
 * `ring` (list) + `ringset` (set): groups with waiting jobs in turn order, `l:{group}` (zset: running
 * ids → lease expiry), `leases` (zset: "group\nid" → expiry, to reap), `workers` (zset: live
 * worker processes → heartbeat expiry), `waiting` (counter). Each
 * script is atomic, so every process sees one order and one count of running jobs per group.
 * Expiry uses Redis's clock (TIME): processes' clocks may differ.
 */
const NOW_MS = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Needs `base`, `now` and `lease`; sets `grace`. Every worker touches Redis at least every third of a
 * lease (its renewals). When nobody has for over half a lease, Redis was unreachable or paused (or no
 * worker was up): the live workers missed their renewals through no fault of theirs, so for one lease
 * after that nothing is reaped and no worker is dropped, which gives them time to renew. Without this
 * an outage longer than a lease handed every running job to another process while it still ran.
 */
const GRACE = `
local seen = tonumber(redis.call('GET', base .. 'seen') or '0')
redis.call('SET', base .. 'seen', now, 'PX', 86400000)
if seen > 0 and now - seen > lease / 2 then redis.call('SET', base .. 'grace', '1', 'PX', lease) end
local grace = redis.call('EXISTS', base .. 'grace') == 1`;

/** ARGV: base, id, group, payload. 1 added, 0 known already (waiting or running). */
const ADD = `
local base = ARGV[1]
if redis.call('HSETNX', base .. 'jobs', ARGV[2], ARGV[4]) == 0 then return 0 end
redis.call('RPUSH', base .. 'p:' .. ARGV[3], ARGV[2])
redis.call('INCR', base .. 'waiting')
if redis.call('SADD', base .. 'ringset', ARGV[3]) == 1 then redis.call('RPUSH', base .. 'ring', ARGV[3]) end
redis.call('PUBLISH', base .. 'wake', '1')
return 1`;

/**
 * ARGV: base, leaseMs, perGroup, workerId. Reaps expired leases first, outside a grace (their jobs
 * go back to the front of their group: a dead process's job runs again elsewhere), then serves the next group in
 * turn with a free slot: fewer than perGroup × live workers running (a group's share per worker,
 * counted where it survives a crash). Returns {id, group, payload} or nil.
 */
const TAKE = `
local base = ARGV[1]
${NOW_MS}
local lease = tonumber(ARGV[2])
${GRACE}
redis.call('ZADD', base .. 'workers', now + lease, ARGV[4])
if not grace then redis.call('ZREMRANGEBYSCORE', base .. 'workers', '-inf', now) end
local per = tonumber(ARGV[3]) * math.max(1, redis.call('ZCARD', base .. 'workers'))
local expired = {}
if not grace then expired = redis.call('ZRANGEBYSCORE', base .. 'leases', '-inf', now, 'LIMIT', 0, 100) end
for _, member in ipairs(expired) do
  local cut = string.find(member, '\\n', 1, true)
  local g = string.sub(member, 1, cut - 1)
  local id = string.sub(member, cut + 1)
  redis.call('ZREM', base .. 'leases', member)
  redis.call('ZREM', base .. 'l:' .. g, id)
  if redis.call('HEXISTS', base .. 'jobs', id) == 1 then
    redis.call('LPUSH', base .. 'p:' .. g, id)
    redis.call('INCR', base .. 'waiting')
    if redis.call('SADD', base .. 'ringset', g) == 1 then redis.call('LPUSH', base .. 'ring', g) end
  end
end
local turns = redis.call('LLEN', base .. 'ring')
for i = 1, turns do
  local g = redis.call('LPOP', base .. 'ring')
  if not g then return nil end
  local waiting = base .. 'p:' .. g
  if redis.call('LLEN', waiting) == 0 then
    redis.call('SREM', base .. 'ringset', g)
  elseif redis.call('ZCARD', base .. 'l:' .. g) >= per then
    redis.call('RPUSH', base .. 'ring', g)
  else
    local id = redis.call('LPOP', waiting)
    redis.call('DECR', base .. 'waiting')
    redis.call('ZADD', base .. 'l:' .. g, now + lease, id)
    redis.call('ZADD', base .. 'leases', now + lease, g .. '\\n' .. id)
    if redis.call('LLEN', waiting) > 0 then redis.call('RPUSH', base .. 'ring', g)
    else redis.call('SREM', base .. 'ringset', g) end
    local payload = redis.call('HGET', base .. 'jobs', id)
    if payload then return {id, g, payload} end
    redis.call('ZREM', base .. 'l:' .. g, id)
    redis.call('ZREM', base .. 'leases', g .. '\\n' .. id)
  end
end
return nil`;

/**
 * ARGV: base, leaseMs, workerId, then group, id pairs. Extends this worker's heartbeat and the
 * leases it still holds.
 */
const RENEW = `
local base = ARGV[1]
${NOW_MS}
local lease = tonumber(ARGV[2])
${GRACE}
local until_ = now + lease
if ARGV[3] ~= '' then redis.call('ZADD', base .. 'workers', until_, ARGV[3]) end
for i = 4, #ARGV, 2 do
  local g, id = ARGV[i], ARGV[i + 1]
  if redis.call('ZSCORE', base .. 'l:' .. g, id) then
    redis.call('ZADD', base .. 'l:' .. g, until_, id)
    redis.call('ZADD', base .. 'leases', until_, g .. '\\n' .. id)
  end
end
return 1`;

/** ARGV: base, workerId. A worker that stops is no longer counted. */
const LEAVE = `redis.call('ZREM', ARGV[1] .. 'workers', ARGV[2]) return 1`;

/** ARGV: base, group, id. The job ended: its slot and its id are free. */
const DONE = `
local base = ARGV[1]
redis.call('ZREM', base .. 'l:' .. ARGV[2], ARGV[3])
redis.call('ZREM', base .. 'leases', ARGV[2] .. '\\n' .. ARGV[3])
redis.call('HDEL', base .. 'jobs', ARGV[3])
redis.call('PUBLISH', base .. 'wake', '1')
return 1`;

/**
 * ARGV: base, group, id, payload. A failed run with attempts left: its slot is free and the job, with
 * its payload (the next attempt's number), waits again at the back of its group.
 */
const RETRY = `
local base = ARGV[1]
redis.call('ZREM', base .. 'l:' .. ARGV[2], ARGV[3])
redis.call('ZREM', base .. 'leases', ARGV[2] .. '\\n' .. ARGV[3])
if redis.call('HEXISTS', base .. 'jobs', ARGV[3]) == 0 then return 0 end
redis.call('HSET', base .. 'jobs', ARGV[3], ARGV[4])
redis.call('RPUSH', base .. 'p:' .. ARGV[2], ARGV[3])
redis.call('INCR', base .. 'waiting')
if redis.call('SADD', base .. 'ringset', ARGV[2]) == 1 then redis.call('RPUSH', base .. 'ring', ARGV[2]) end
redis.call('PUBLISH', base .. 'wake', '1')
return 1`;

/** What a job's hash entry holds: the payload, when it was added (ms) and its attempt (absent: 1). */
interface Stored {
  d: unknown;
  t: number;
  a?: number;
}

/** Longest a process with free slots sleeps between looks (leases of dead processes expire meanwhile). */
const IDLE_LOOK_MS = 1_000;
/** After a Redis error, the dispatcher looks again this much later (ioredis reconnects meanwhile). */
const ERROR_PAUSE_MS = 1_000;

interface Running {
  group: string;
  promise: Promise<void>;
}

/**
 * The shared fair queue: waiting jobs per group (account) in Redis, served round-robin by group
 * with at most `perGroup` × (live worker processes) running per group, counted in Redis so the
 * count survives a crash (a worker's heartbeat and its jobs' leases expire). A running job holds a lease
 * renewed while it runs; a process that dies stops renewing, and once the lease expires its job
 * goes back to the front of its group for another process (as BullMQ's stalled-job check does).
 * BullMQ itself has per-group fairness only in its paid edition, hence this layer.
 */
export class FairRedisQueue<T> implements JobQueue<T> {
  readonly kind = 'bullmq' as const;
  private readonly base: string;
  private readonly leaseMs: number;
  private client: Redis | null = null;
  private subscriber: Redis | null = null;
  private readonly running = new Map<string, Running>();
  /** Jobs whose release failed (Redis unreachable): released again before the next take. */
  private readonly unreleased = new Map<string, { group: string; requeue: boolean; retry?: string }>();
  private handler: JobHandler<T> | null = null;
  private concurrency = 1;
  private closed = false;
  private wakeUp: (() => void) | null = null;
  /** A wake-up that came while the dispatcher was not pausing: its next pause returns at once. */
  private woken = false;
  private loopDone: Promise<void> = Promise.resolve();
  private renewTimer: NodeJS.Timeout | undefined;
  /** This process as a worker: counted while its heartbeat (renewed with its leases) lasts. */
  private readonly workerId = randomUUID();

  constructor(private readonly options: FairRedisQueueOptions<T>) {
    this.base = `${options.prefix}:${options.job.name}:fair:`;
    this.leaseMs = (options.stallSeconds ?? 30) * 1000;
  }

  private redis(): Redis {
    // No blocking commands here: during an outage a command fails after the command timeout (an
    // add's caller gets a 503; the dispatcher looks again a second later).
    if (!this.client) {
      this.client = new Redis(this.options.redisUrl, redisOptions(this.commandTimeoutMs));
      // Reconnects are the client's job (retryStrategy); an unheard 'error' event must not throw.
      this.client.on('error', () => undefined);
    }
    return this.client;
  }

  private get commandTimeoutMs(): number {
    return this.options.commandTimeoutMs ?? 2_000;
  }

  /**
   * Bounded: an unreachable Redis is a 503 (`SERVICE_UNAVAILABLE`, dependency `queue`) after the
   * command timeout at most. The add may still reach Redis later: callers make a late job harmless
   * (the execution it names is canceled first, see execution-runner.ts).
   */
  async add(jobId: string, data: T): Promise<void> {
    if (this.closed) throw new Error('Queue is closed');
    const checked = this.options.job.parse(data, jobId);
    const group = this.options.fairness.groupOf(checked);
    const payload = JSON.stringify({ d: checked, t: Date.now() } satisfies Stored);
    await boundedAdd(this.redis().eval(ADD, 0, this.base, jobId, group, payload), this.commandTimeoutMs);
  }

  work(handler: JobHandler<T>, concurrency: number): void {
    if (this.handler) return;
    this.handler = handler;
    this.concurrency = Math.max(1, concurrency);
    // Subscribed for wake-ups only (the dispatcher also looks every second); ioredis subscribes
    // again after a reconnect.
    this.subscriber = new Redis(this.options.redisUrl, blockingRedisOptions());
    this.subscriber.on('message', () => this.wake());
    this.subscriber.on('error', (error) => this.options.onError(error, ''));
    this.subscriber.subscribe(`${this.base}wake`).catch((error) => this.options.onError(error, ''));
    this.renewTimer = setInterval(() => this.renew(), Math.max(500, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
    this.loopDone = this.dispatch();
  }

  async waiting(): Promise<number> {
    return Number((await this.redis().get(`${this.base}waiting`)) ?? 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
    clearInterval(this.renewTimer);
    if (this.handler)
      await this.redis()
        .eval(LEAVE, 0, this.base, this.workerId)
        .catch(() => undefined);
    await Promise.allSettled([this.client?.quit(), this.subscriber?.quit()]);
  }

  private wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    if (wake) wake();
    else this.woken = true;
  }

  /** Resolves on a wake-up (a job added or ended anywhere, a slot freed here) or after `ms`. */
  private pause(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async dispatch(): Promise<void> {
    while (!this.closed) {
      if (this.unreleased.size > 0 && !(await this.releaseLate())) {
        await this.pause(ERROR_PAUSE_MS);
        continue;
      }
      if (this.running.size >= this.concurrency) {
        await this.pause(IDLE_LOOK_MS);
        continue;
      }
      let taken: [string, string, string] | null;
      try {
        taken = (await this.redis().eval(
          TAKE,
          0,
          this.base,
          this.leaseMs,
          Math.max(1, this.options.fairness.perGroup),
          this.workerId,
        )) as [string, string, string] | null;
      } catch (error) {
        this.options.onError(error, '');
        await this.pause(ERROR_PAUSE_MS);
        continue;
      }
      if (!taken) {
        await this.pause(IDLE_LOOK_MS);
        continue;
      }
      if (this.closed) {
        // Taken after close began: handed back at once rather than after the lease expires.
        await this.release(taken[1], taken[0], true);
        return;
      }
      this.start(taken[0], taken[1], taken[2]);
    }
  }

  /** Never throws: whatever was read back, a bad one fails its job only (not the dispatcher). */
  private start(jobId: string, group: string, payload: string): void {
    const handler = this.handler as JobHandler<T>;
    const { job } = this.options;
    const stored = readStored(payload);
    const attempt = stored?.a ?? 1;
    const startedAt = performance.now();
    const settled = (outcome: 'completed' | 'failed') =>
      notifyObserver(this.options.observer, {
        queue: job.name,
        outcome,
        // Stamped by the adding process's clock; another host's may differ.
        waitSeconds: stored ? Math.max(0, (Date.now() - stored.t) / 1000) : 0,
        runSeconds: (performance.now() - startedAt) / 1000,
      });
    let retry: string | undefined;
    const run = stored
      ? runJob(job, handler, stored.d, jobId, attempt)
      : Promise.reject(new JobPayloadError(job.name, jobId, ['/ is not the JSON of a queued job']));
    const promise = run
      .then(
        () => settled('completed'),
        (error: unknown) => {
          settled('failed');
          if (stored && mayRetry(job, error, attempt))
            retry = JSON.stringify({ ...stored, a: attempt + 1 } satisfies Stored);
          // Told once, when the job has failed for good.
          else this.options.onError(error, jobId);
        },
      )
      .finally(async () => {
        await this.release(group, jobId, false, retry);
        this.running.delete(jobId);
        this.wake();
      });
    this.running.set(jobId, { group, promise });
  }

  /**
   * Frees the job's slot; `requeue`: it did not run, it waits again at the front of its group;
   * `retry`: it failed with attempts left, it waits again at the back with this payload.
   */
  private async release(group: string, jobId: string, requeue: boolean, retry?: string): Promise<void> {
    try {
      if (retry !== undefined) {
        await this.redis().eval(RETRY, 0, this.base, group, jobId, retry);
      } else if (requeue) {
        // An expired lease is how a job goes back: expire it now.
        await this.redis().eval(RENEW, 0, this.base, -1, '', group, jobId);
      } else {
        await this.redis().eval(DONE, 0, this.base, group, jobId);
      }
    } catch (error) {
      // Redis unreachable: released again as soon as it answers (before this worker takes another
      // job), so a slot does not stay taken until its lease expires; a Redis restarted from a
      // snapshot would otherwise hold the account at its cap and run the job again after that.
      this.unreleased.set(jobId, { group, requeue, ...(retry !== undefined ? { retry } : {}) });
      this.options.onError(error, jobId);
    }
  }

  /** Releases that failed during an outage, retried in order; false while Redis still fails. */
  private async releaseLate(): Promise<boolean> {
    for (const [jobId, { group, requeue, retry }] of this.unreleased) {
      this.unreleased.delete(jobId);
      await this.release(group, jobId, requeue, retry);
      if (this.unreleased.has(jobId)) return false;
    }
    return true;
  }

  private renew(): void {
    const args: string[] = [];
    for (const [jobId, { group }] of this.running) args.push(group, jobId);
    this.redis()
      .eval(RENEW, 0, this.base, this.leaseMs, this.workerId, ...args)
      .catch((error: unknown) => this.options.onError(error, ''));
  }
}

/** A job's hash entry, or null when it is not one (corrupt, or written by something else). */
function readStored(payload: string): Stored | null {
  try {
    const stored = JSON.parse(payload) as unknown;
    if (stored === null || typeof stored !== 'object' || !('d' in stored)) return null;
    const { t, a } = stored as { t?: unknown; a?: unknown };
    return {
      d: (stored as { d: unknown }).d,
      t: typeof t === 'number' ? t : Date.now(),
      ...(typeof a === 'number' && Number.isInteger(a) && a >= 1 ? { a } : {}),
    };
  } catch {
    return null;
  }
}
