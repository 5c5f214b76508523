import { Worker } from 'node:worker_threads';
import { TenantTurns } from '../fairness/tenant-turns.js';

/**
 * Worker threads for CPU work whose size a caller controls (parsing, chunking, embedding, the built-in
 * models on large inputs): the event loop only hands the input over and takes the result back. Each
 * call has a deadline at which its worker is terminated (whatever it is doing), and each worker a heap
 * limit (running out fails that call, never the process). Waiting calls are served one tenant (account)
 * at a time in turn, so one account's large inputs do not hold another's small ones back for long.
 */

/** A function a task module exports: `(input: I) => O | Promise<O>`, run in a worker. */
interface CpuTask<I, O> {
  /** The module's URL, spelled `.js` (from the sources, the worker's loader finds the `.ts`). */
  module: string;
  fn: string;
  /** Carries the types only. */
  readonly types?: (input: I) => O;
}

/** Names a task: `cpuTask<Input, Output>(new URL('./x-task.js', import.meta.url), 'run')`. */
export function cpuTask<I, O>(module: URL, fn: string): CpuTask<I, O> {
  return { module: module.href, fn };
}

interface CpuPoolOptions {
  /** Worker threads at most (each runs one call at a time); they start on demand. */
  workers: number;
  /** Heap limit of each worker (V8 old generation), in MiB. */
  heapMb: number;
  /** Calls waiting for a worker beyond this are refused. */
  maxQueue: number;
  /** A worker idle this long ends, so a burst does not hold memory for ever. */
  idleMs?: number;
}

interface CpuRunOptions {
  /** The worker running the call is terminated this long after the call started. */
  timeoutMs: number;
  /** Whose work it is (an account): waiting calls are served one tenant at a time in turn. */
  tenant?: string;
  /** Aborting drops a waiting call, or terminates the worker running it. */
  signal?: AbortSignal;
  /** Buffers of the input moved to the worker instead of copied. */
  transfer?: ArrayBuffer[];
}

type CpuLimit = 'time' | 'memory' | 'queue' | 'crash' | 'aborted';

export class CpuTaskError extends Error {
  constructor(
    message: string,
    /** Which bound stopped the call, or null when the task itself threw. */
    readonly limit: CpuLimit | null,
  ) {
    super(message);
    this.name = 'CpuTaskError';
  }
}

interface Call {
  id: number;
  tenant: string;
  message: { id: number; module: string; fn: string; input: unknown };
  transfer: ArrayBuffer[];
  timeoutMs: number;
  resolve(value: unknown): void;
  reject(error: CpuTaskError): void;
  cleanup(): void;
  settled: boolean;
}

type Reply =
  | { ready: true }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string };

interface Slot {
  worker: Worker;
  ready: boolean;
  call: Call | null;
  deadline: NodeJS.Timeout | null;
  idle: NodeJS.Timeout | null;
}

const WORKER_URL = new URL('./cpu-worker.mjs', import.meta.url);
/** Running from the TypeScript sources (tests, tsx): the worker then loads task modules through tsx. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const IDLE_MS = 60_000;

export class CpuPool {
  private readonly slots: Slot[] = [];
  /** Waiting calls, served one tenant at a time in turn. */
  private readonly queue = new TenantTurns<Call>();
  private nextId = 1;
  private closed = false;
  /** Workers started so far (tests check that a runaway's worker was replaced). */
  started = 0;

  constructor(private readonly options: CpuPoolOptions) {}

  run<I, O>(task: CpuTask<I, O>, input: I, options: CpuRunOptions): Promise<O> {
    if (this.closed) return Promise.reject(new CpuTaskError('the CPU pool is closed', 'crash'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new CpuTaskError('the call was aborted', 'aborted'));
    if (this.queue.waiting >= this.options.maxQueue)
      return Promise.reject(new CpuTaskError('the CPU pool is busy; try again', 'queue'));
    return new Promise<O>((resolve, reject) => {
      const id = this.nextId++;
      const onAbort = () => this.abort(call);
      const call: Call = {
        id,
        tenant: options.tenant ?? 'default',
        message: { id, module: task.module, fn: task.fn, input },
        transfer: options.transfer ?? [],
        timeoutMs: options.timeoutMs,
        resolve: (value) => resolve(value as O),
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
        settled: false,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(call.tenant, call);
      this.dispatch();
    });
  }

  /** Workers alive now. */
  get size(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const call of this.queue.drain()) settle(call, new CpuTaskError('the CPU pool is closed', 'crash'));
    await Promise.all(
      this.slots.splice(0).map((slot) => this.retire(slot, 'the CPU pool is closed', 'crash')),
    );
  }

  private dispatch(): void {
    while (this.queue.waiting > 0) {
      const slot = this.slots.find((s) => s.ready && s.call === null);
      if (!slot) {
        if (this.slots.length < this.options.workers) this.spawn();
        return;
      }
      const next = this.queue.take();
      if (!next) return;
      const call = next.item;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.call = call;
      slot.worker.ref();
      slot.deadline = setTimeout(
        () => void this.retire(slot, `took longer than ${call.timeoutMs} ms`, 'time'),
        call.timeoutMs,
      );
      try {
        slot.worker.postMessage(call.message, call.transfer);
      } catch (error) {
        // An input that cannot be cloned fails its call; the worker is fine.
        this.release(slot);
        settle(call, new CpuTaskError(`the input cannot be sent: ${(error as Error).message}`, null));
      }
    }
  }

  private spawn(): void {
    const worker = new Worker(WORKER_URL, {
      workerData: { typescript: FROM_SOURCES },
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb, maxYoungGenerationSizeMb: 32 },
      stdout: true,
      stderr: true,
    });
    // Libraries may write to the console about odd inputs; that is not the server's log.
    worker.stdout.resume();
    worker.stderr.resume();
    this.started++;
    const slot: Slot = { worker, ready: false, call: null, deadline: null, idle: null };
    this.slots.push(slot);
    worker.unref();
    worker.on('message', (reply: Reply) => this.onReply(slot, reply));
    worker.on('error', (error: Error & { code?: string }) =>
      this.retire(
        slot,
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'needed more memory than allowed' : error.message,
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'crash',
      ),
    );
    worker.on('exit', () => void this.retire(slot, 'the worker stopped', 'crash'));
  }

  private onReply(slot: Slot, reply: Reply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const call = slot.call;
    if (!call || call.id !== reply.id) return;
    this.release(slot);
    settle(call, reply.ok ? { value: reply.value } : new CpuTaskError(reply.error, null));
    this.dispatch();
  }

  private release(slot: Slot): void {
    if (slot.deadline) clearTimeout(slot.deadline);
    slot.deadline = null;
    slot.call = null;
    slot.worker.unref();
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => void this.retire(slot, 'idle', 'crash'), this.options.idleMs ?? IDLE_MS);
    slot.idle.unref();
  }

  private abort(call: Call): void {
    if (this.queue.remove(call.tenant, call)) {
      settle(call, new CpuTaskError('the call was aborted', 'aborted'));
      return;
    }
    // Running: JavaScript cannot be interrupted from outside but by ending its thread.
    const slot = this.slots.find((s) => s.call === call);
    if (slot) void this.retire(slot, 'the call was aborted', 'aborted');
  }

  /** Terminates a worker; its call (if any) fails, and waiting calls go to another or a fresh one. */
  private async retire(slot: Slot, message: string, limit: CpuLimit): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const call = slot.call;
    if (slot.deadline) clearTimeout(slot.deadline);
    if (slot.idle) clearTimeout(slot.idle);
    if (call) settle(call, new CpuTaskError(message, limit));
    // A worker that cannot even start would leave every waiting call waiting for ever.
    if (!slot.ready && limit === 'crash' && this.slots.every((s) => !s.ready))
      for (const queued of this.queue.drain()) settle(queued, new CpuTaskError(message, 'crash'));
    slot.worker.removeAllListeners('exit');
    const stopped = slot.worker.terminate();
    if (!this.closed) this.dispatch();
    await stopped;
  }
}

/** Ends a call once: a late reply from a worker being terminated is ignored. */
function settle(call: Call, outcome: { value: unknown } | CpuTaskError): void {
  if (call.settled) return;
  call.settled = true;
  call.cleanup();
  if (outcome instanceof CpuTaskError) call.reject(outcome);
  else call.resolve(outcome.value);
}
