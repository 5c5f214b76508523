/**
 * Issue 37: a virtual-time model of the game platform's outbound throttle across processes (the
 * Lua script of src/modules/game/redis-slots.ts and, per process, its slots taken ahead, reserve,
 * hold time, background refill and the OutboundThrottle queue), to see without a quiet machine
 * whether calls wait for a slot or take it over Redis at a given rate. It is a copy of the logic,
 * not the code: keep it in step when the throttle changes.
 * `node bench/game-throttle-model.js [ahead reserve holdMs jitterMs latencyMs rate seconds rttMs processes]`
 * (defaults: 1 1 250 10 6 20 300 0.3 2).
 */
const [
  ahead = 1,
  reserve = 1,
  holdMs = 250,
  jitter = 10,
  latency = 6,
  rate = 20,
  seconds = 600,
  rtt = 0.3,
  procsN = 2,
] = process.argv.slice(2).map(Number);
const LIMIT = 25;
const WINDOW = 1000;
const LEASE = 15000;
const POLL = 20;
let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

// Event queue.
const events = [];
let now = 0;
function at(t, fn) {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid].t <= t) lo = mid + 1;
    else hi = mid;
  }
  events.splice(lo, 0, { t, fn });
}

// "Redis": member -> score.
const set = new Map();
let nextId = 0;
function script(need, extraWanted, unused) {
  for (const m of unused) set.delete(m);
  for (const [m, s] of set) if (s <= now - WINDOW) set.delete(m);
  const free = LIMIT - set.size;
  let granted = Math.max(0, Math.min(need, free));
  const extra = Math.min(extraWanted, free - granted - reserve);
  if (extra > 0) granted += extra;
  const ids = [];
  for (let n = 0; n < granted; n++) {
    const id = nextId++;
    set.set(id, now + LEASE);
    ids.push(id);
  }
  if (granted > 0) return { ids, waitMs: 0 };
  if (need === 0) return { ids, waitMs: 0 };
  let oldest = Number.POSITIVE_INFINITY;
  for (const s of set.values()) oldest = Math.min(oldest, s);
  if (oldest > now) return { ids, waitMs: -1 };
  return { ids, waitMs: Math.max(1, oldest + WINDOW - now) };
}
/** A call to Redis: runs at now + rtt/2, answers at now + rtt. */
function redis(need, extraWanted, unused, cb) {
  at(now + rtt / 2, () => {
    const r = script(need, extraWanted, unused);
    at(now + rtt / 2, () => cb(r));
  });
}

const stats = { calls: 0, onPath: 0, queued: 0, waits: [], latencies: [], arrivals: [] };

class Proc {
  spares = [];
  unused = [];
  refilling = false;
  queue = [];
  pumping = false;
  holdArmed = false;
  flushArmed = false;

  expire() {
    const since = now - holdMs;
    while (this.spares.length && this.spares[0].at <= since) this.unused.push(this.spares.shift().id);
    if (this.unused.length && !this.flushArmed) {
      this.flushArmed = true;
      at(now + 50, () => {
        this.flushArmed = false;
        const u = this.unused.splice(0);
        if (u.length) redis(0, 0, u, () => {});
      });
    }
  }
  keep(ids) {
    for (const id of ids) this.spares.push({ id, at: now });
    this.armHold();
  }
  armHold() {
    if (this.holdArmed || !this.spares.length) return;
    this.holdArmed = true;
    at(now + holdMs, () => {
      this.holdArmed = false;
      this.expire();
      this.armHold();
    });
  }
  refill() {
    if (this.refilling || ahead === 0 || this.spares.length >= ahead) return;
    this.refilling = true;
    redis(0, Math.max(0, ahead - this.spares.length), this.unused.splice(0), (r) => {
      this.keep(r.ids);
      this.refilling = false;
    });
  }
  /** tryTake: cb({id} | {waitMs}) */
  tryTake(cb, onPath) {
    this.expire();
    const spare = this.spares.shift();
    if (spare) {
      this.refill();
      cb({ id: spare.id });
      return;
    }
    if (onPath) onPath();
    redis(1, Math.max(0, ahead - this.spares.length), this.unused.splice(0), (r) => {
      const [id, ...rest] = r.ids;
      if (id === undefined) return cb({ waitMs: r.waitMs < 0 ? POLL : r.waitMs });
      this.keep(rest);
      cb({ id });
    });
  }
  acquire(cb) {
    const start = now;
    let path = false;
    const done = (id) => {
      stats.waits.push(now - start);
      if (path) stats.onPath++;
      cb(id);
    };
    if (this.queue.length === 0 && !this.pumping) {
      this.tryTake(
        (r) => {
          if ('id' in r) return done(r.id);
          stats.queued++;
          this.queue.push(done);
          this.pump();
        },
        () => {
          path = true;
        },
      );
      return;
    }
    stats.queued++;
    this.queue.push(done);
    this.pump();
  }
  pump() {
    if (this.pumping) return;
    this.pumping = true;
    const step = () => {
      if (!this.queue.length) {
        this.pumping = false;
        return;
      }
      this.tryTake((r) => {
        if ('id' in r) {
          this.queue.shift()(r.id);
          step();
        } else at(now + r.waitMs, step);
      });
    };
    step();
  }
}

const procs = Array.from({ length: procsN }, () => new Proc());
const total = rate * seconds;
for (let i = 0; i < total; i++) {
  const t = (i * 1000) / rate + rand() * jitter;
  at(t, () => {
    const start = now;
    stats.calls++;
    procs[i % procs.length].acquire((id) => {
      stats.arrivals.push(now);
      const lat = latency * (0.5 + rand());
      at(now + lat, () => {
        if (set.has(id)) set.set(id, now);
        stats.latencies.push(now - start);
      });
    });
  });
}
while (events.length) {
  const e = events.shift();
  now = e.t;
  e.fn();
}
const sorted = stats.waits.sort((a, b) => a - b);
const pct = (p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
const arr = stats.arrivals.sort((a, b) => a - b);
let peak = 0;
let from = 0;
for (let to = 0; to < arr.length; to++) {
  while (arr[to] - arr[from] >= 1000) from++;
  peak = Math.max(peak, to - from + 1);
}
const waited = sorted.filter((w) => w > rtt * 1.5).length;
console.log(
  `ahead ${ahead} reserve ${reserve} hold ${holdMs} jitter ${jitter} lat ${latency} rate ${rate} rtt ${rtt} procs ${procsN}: ` +
    `queued ${stats.queued}/${stats.calls} (${((100 * stats.queued) / stats.calls).toFixed(2)}%), waited>rtt ${waited}, on-path takes ${stats.onPath}, ` +
    `wait p50 ${pct(0.5).toFixed(2)} p99 ${pct(0.99).toFixed(2)} p999 ${pct(0.999).toFixed(2)} max ${sorted.at(-1).toFixed(1)} ms, peak/s ${peak}`,
);
