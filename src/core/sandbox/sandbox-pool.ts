import { Worker } from 'node:worker_threads';
import { TenantTurns } from '../fairness/tenant-turns.js';

/**
 * Runs guest JavaScript (expressions, user code) in QuickJS isolates on worker threads, so that no user
 * text runs on the server's own V8 heap or its event loop. Each call has a deadline that QuickJS polls
 * while it interprets; a built-in that loops in C without polling is stopped by terminating its worker
 * shortly after the deadline. Memory is bounded by QuickJS's allocator inside WebAssembly, so an
 * oversized allocation fails the call instead of aborting the process.
 *
 * Isolation: a worker restores its guest heap to the state right after the scripts loaded before it
 * serves a call of another realm (an execution), so no state crosses executions (quickjs-worker.mjs).
 * Fairness: waiting calls are served one tenant (account) at a time in turn, and a tenant holds at
 * most `maxPerTenant` workers at once, so one account's runaways leave workers for the others.
 */

export interface GuestScript {
  /** Shown in guest stack traces. */
  name: string;
  code: string;
  /** Evaluate as an ES module (default: a global script). */
  module?: boolean;
}

interface SandboxPoolOptions {
  /** Scripts evaluated, in order, in every fresh guest context; they define the callable functions. */
  scripts: readonly GuestScript[];
  /** Worker threads (each one QuickJS runtime, one call at a time). */
  workers: number;
  /** The guest heap limit, in MiB, scripts included. */
  memoryMb: number;
  /** Calls waiting for a worker beyond this are refused. */
  maxQueue?: number;
  /** Most workers one tenant's calls may hold at once (default: all); the rest wait their turn. */
  maxPerTenant?: number;
}

export interface CallScope {
  /** Whose work it is (an account): queues, turns and the per-tenant cap are by tenant. */
  tenant?: string;
  /**
   * Which calls may see each other's guest state (an execution of that tenant); a call of another
   * realm, or with none, starts from a pristine guest heap.
   */
  realm?: string | null;
}

type SandboxLimit = 'time' | 'memory' | 'stack' | 'queue' | 'crash';

export class SandboxError extends Error {
  constructor(
    message: string,
    /** Which bound was hit, or null when the guest threw. */
    readonly limit: SandboxLimit | null,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

interface Call {
  id: number;
  tenant: string;
  realm: string | null;
  fn: string;
  arg: string;
  timeoutMs: number;
  resolve(value: string): void;
  reject(error: SandboxError): void;
}

type Reply =
  | { ready: true }
  | { id: number; ok: true; value: string }
  | { id: number; ok: false; error: string; limit: SandboxLimit | null };

interface Slot {
  worker: Worker;
  ready: boolean;
  call: Call | null;
  /** The realm whose state the worker's guest heap holds (null: pristine or unknown). */
  realm: string | null;
  killer: NodeJS.Timeout | null;
  /** Ends a worker left idle, so a burst's workers do not hold their memory for ever. */
  idle: NodeJS.Timeout | null;
}

const WORKER_URL = new URL('./quickjs-worker.mjs', import.meta.url);
const STACK_BYTES = 512 * 1024;
/**
 * How long past its deadline a call may hold its worker before the worker is terminated. QuickJS
 * polls the deadline itself; only a C built-in that does not poll ever reaches this.
 */
const KILL_GRACE_MS = 250;
const IDLE_MS = 60_000;

export class SandboxPool {
  private readonly slots: Slot[] = [];
  /** Waiting calls per tenant, served in turn: one tenant's runaways cannot hold the others back. */
  private readonly queue = new TenantTurns<Call>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SandboxPoolOptions) {}

  /**
   * Calls the guest function `fn` with one string argument; resolves with the string it returns.
   * `scope.tenant` names whose work it is (an account): waiting calls are served one tenant at a time
   * in turn; `scope.realm` which earlier calls' guest state it may see (none by default).
   */
  call(fn: string, arg: string, timeoutMs: number, scope: CallScope = {}): Promise<string> {
    if (this.closed) return Promise.reject(new SandboxError('the sandbox is closed', 'crash'));
    const tenant = scope.tenant ?? 'default';
    const realm = scope.realm ?? null;
    if (!this.makeRoomFor(tenant))
      return Promise.reject(new SandboxError('the sandbox is busy; try again', 'queue'));
    return new Promise<string>((resolve, reject) => {
      this.queue.push(tenant, { id: this.nextId++, tenant, realm, fn, arg, timeoutMs, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts up to `count` workers now, in the background (nothing to await): a process that will run
   * expressions soon (the server, at start) has them booted by its first call, which otherwise waits
   * for a worker's start (a thread, QuickJS's WebAssembly and the guest scripts: about a second of CPU).
   * A call arriving meanwhile waits for the worker starting, as any call does. A warmed worker left
   * unused ends after the idle time, as a used one does.
   */
  warm(count = 1): void {
    while (!this.closed && this.slots.length < Math.min(count, this.options.workers)) this.spawn();
  }

  /** Workers currently alive (for tests and metrics). */
  get size(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const call of this.queue.drain()) call.reject(new SandboxError('the sandbox is closed', 'crash'));
    await Promise.all(this.slots.splice(0).map((slot) => this.retire(slot, 'the sandbox is closed')));
  }

  /** Workers busy with `tenant`'s calls. */
  busyFor(tenant: string): number {
    let busy = 0;
    for (const slot of this.slots) if (slot.call?.tenant === tenant) busy++;
    return busy;
  }

  /**
   * The next call in turn: the first of the tenant waiting longest for a turn, who then goes last.
   * A tenant holding its share of workers is passed over (keeping its place) until one is released.
   */
  private next(): Call | undefined {
    const cap = this.options.maxPerTenant ?? this.options.workers;
    return this.queue.take((tenant) => this.busyFor(tenant) >= cap)?.item;
  }

  /**
   * The queue is full: the tenant waiting with the most calls gives up its newest one, unless that is
   * `tenant` itself (or holds no more than it). One account filling the queue (an execution's items
   * evaluated in parallel can) is then refused its excess, never another account its first call.
   */
  private makeRoomFor(tenant: string): boolean {
    const { admitted, evicted } = this.queue.admit(tenant, this.options.maxQueue ?? 10_000);
    evicted?.reject(new SandboxError('the sandbox is busy; try again', 'queue'));
    return admitted;
  }

  private dispatch(): void {
    while (this.queue.waiting > 0) {
      const free = this.slots.filter((s) => s.ready && s.call === null);
      if (free.length === 0) {
        // One more worker only when those starting are fewer than the calls waiting: a call that
        // arrives while a warmed worker boots waits for it rather than booting another beside it.
        const starting = this.slots.filter((s) => !s.ready).length;
        if (starting < this.queue.waiting && this.slots.length < this.options.workers) this.spawn();
        return;
      }
      const call = this.next();
      if (!call) return;
      // The worker that last served this realm can run it without restoring its heap first.
      const slot = free.find((s) => call.realm !== null && s.realm === call.realm) ?? (free[0] as Slot);
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.call = call;
      slot.realm = call.realm;
      slot.worker.ref();
      slot.killer = setTimeout(() => {
        void this.retire(slot, `took longer than ${call.timeoutMs} ms`, 'time');
      }, call.timeoutMs + KILL_GRACE_MS);
      slot.worker.postMessage({
        id: call.id,
        fn: call.fn,
        arg: call.arg,
        timeoutMs: call.timeoutMs,
        realm: call.realm,
      });
    }
  }

  private spawn(): void {
    const worker = new Worker(WORKER_URL, {
      workerData: {
        scripts: this.options.scripts,
        memoryBytes: this.options.memoryMb * 1024 * 1024,
        stackBytes: STACK_BYTES,
      },
      // The V8 side only relays strings; the guest heap is WebAssembly memory outside these limits.
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, ready: false, call: null, realm: null, killer: null, idle: null };
    this.slots.push(slot);
    worker.unref();
    worker.on('message', (reply: Reply) => this.onReply(slot, reply));
    worker.on('error', (error) => void this.retire(slot, `the sandbox failed: ${error.message}`, 'crash'));
    worker.on('exit', () => void this.retire(slot, 'the sandbox stopped', 'crash'));
  }

  private onReply(slot: Slot, reply: Reply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.dispatch();
      // Started ahead of any call (warm) and none waiting: idle from now.
      if (slot.call === null && !slot.idle) this.release(slot);
      return;
    }
    const call = slot.call;
    if (!call || call.id !== reply.id) return;
    this.release(slot);
    if (reply.ok) call.resolve(reply.value);
    else call.reject(new SandboxError(messageFor(reply.error, reply.limit, call.timeoutMs), reply.limit));
    // After a limit the worker restores its pristine heap before the next call; after the memory limit
    // it is replaced instead, as WebAssembly memory never shrinks and a burst would keep its maximum.
    // A worker that reports itself broken (a WebAssembly trap left state outside the heap it restores,
    // see quickjs-worker.mjs) is replaced too.
    if (!reply.ok && reply.limit !== null) slot.realm = null;
    if (!reply.ok && (reply.limit === 'memory' || reply.limit === 'crash'))
      void this.retire(slot, `${reply.limit} limit reached`);
    else this.dispatch();
  }

  private release(slot: Slot): void {
    if (slot.killer) clearTimeout(slot.killer);
    slot.killer = null;
    slot.call = null;
    slot.worker.unref();
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => void this.retire(slot, 'idle'), IDLE_MS);
    slot.idle.unref();
  }

  /** Terminates a worker; its call (if any) fails, and waiting calls go to a fresh worker. */
  private async retire(slot: Slot, message: string, limit: SandboxLimit = 'crash'): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const call = slot.call;
    this.release(slot);
    if (slot.idle) clearTimeout(slot.idle);
    if (call) call.reject(new SandboxError(messageFor(message, limit, call.timeoutMs), limit));
    // A worker that dies while starting would otherwise leave its queued calls waiting for ever.
    if (!slot.ready && this.slots.every((s) => !s.ready) && limit === 'crash') {
      for (const queued of this.queue.drain()) queued.reject(new SandboxError(message, 'crash'));
    }
    slot.worker.removeAllListeners('exit');
    const stopped = slot.worker.terminate();
    // A replacement starts now rather than on the next call, so a runaway does not also cost the
    // next caller a worker's start-up (an idle worker ends itself after a minute).
    if (!this.closed && slot.ready && message !== 'idle' && this.slots.length < this.options.workers)
      this.spawn();
    await stopped;
    if (!this.closed) this.dispatch();
  }
}

function messageFor(message: string, limit: SandboxLimit | null, timeoutMs: number): string {
  switch (limit) {
    case 'time':
      return `took longer than ${timeoutMs} ms`;
    case 'memory':
      return 'used more memory than allowed';
    case 'stack':
      return 'nested calls too deeply';
    default:
      return message;
  }
}
