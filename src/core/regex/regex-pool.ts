import { Worker } from 'node:worker_threads';

interface RegexJob {
  /** `js`: V8's backtracking RegExp; `re2`: the linear engine, for work too large for the server's thread. */
  engine: 'js' | 're2';
  source: string;
  flags: string;
  input: string;
}

type RegexOutcome =
  | { kind: 'result'; matched: boolean }
  | { kind: 'timeout' }
  | { kind: 'memory' }
  | { kind: 'error'; message: string };

export interface RegexPoolOptions {
  workers: number;
  timeoutMs: number;
  heapMb: number;
}

interface Slot {
  worker: Worker;
  /** Booting (loading the engines) or running a test: the deadline starts when it is ready. */
  busy: boolean;
}

interface Pending {
  job: RegexJob;
  resolve: (outcome: RegexOutcome) => void;
}

const WORKER_URL = new URL('./regex-worker.mjs', import.meta.url);

/**
 * A few worker threads that run one regular-expression test each at a time. A test that overruns its
 * deadline has its thread terminated (the only way to stop a backtracking match) and a fresh thread
 * takes its place on the next job; the deadline starts when the test starts, not while it queues.
 * Idle threads do not hold the process open.
 */
export class RegexPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(readonly options: RegexPoolOptions) {}

  /** Threads alive now (for tests). */
  get size(): number {
    return this.slots.length;
  }

  run(job: RegexJob): Promise<RegexOutcome> {
    if (this.closed) return Promise.resolve({ kind: 'error', message: 'the regex pool is closed' });
    return new Promise((resolve) => {
      this.queue.push({ job, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) {
      pending.resolve({ kind: 'error', message: 'the regex pool is closed' });
    }
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => !s.busy);
      if (!slot) {
        // Start another thread when every one is busy; it takes the queue's head once it has booted.
        if (this.slots.length < this.options.workers) this.spawn();
        return;
      }
      this.dispatch(slot, this.queue.shift() as Pending);
    }
  }

  private spawn(): void {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb, maxYoungGenerationSizeMb: 16 },
    });
    worker.unref();
    const slot: Slot = { worker, busy: true };
    this.slots.push(slot);
    const booted = (msg: { ready?: boolean }) => {
      if (!msg.ready) return;
      worker.off('message', booted);
      worker.off('error', failed);
      slot.busy = false;
      this.pump();
    };
    // A thread that cannot start (its engine failed to load) fails what waits, rather than respawning.
    const failed = (err: Error) => {
      this.retire(slot);
      if (this.slots.length > 0) return;
      for (const pending of this.queue.splice(0)) pending.resolve({ kind: 'error', message: err.message });
    };
    worker.on('message', booted);
    worker.once('error', failed);
  }

  private retire(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    void slot.worker.terminate();
  }

  private dispatch(slot: Slot, pending: Pending): void {
    slot.busy = true;
    const id = ++this.nextId;
    const { worker } = slot;
    let settled = false;
    const finish = (outcome: RegexOutcome, keep: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (keep) {
        slot.busy = false;
        worker.unref();
      } else {
        this.retire(slot);
      }
      pending.resolve(outcome);
      this.pump();
    };
    const onMessage = (msg: { id: number; result?: boolean; error?: string }) => {
      if (msg.id !== id) return;
      finish(
        msg.error === undefined
          ? { kind: 'result', matched: msg.result === true }
          : { kind: 'error', message: msg.error },
        true,
      );
    };
    const onError = (err: Error & { code?: string }) =>
      finish(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { kind: 'memory' }
          : { kind: 'error', message: err.message },
        false,
      );
    const onExit = () => finish({ kind: 'error', message: 'the regex worker stopped' }, false);
    const timer = setTimeout(() => finish({ kind: 'timeout' }, false), this.options.timeoutMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    // Referenced while it works: a test under way keeps the process alive until it answers.
    worker.ref();
    worker.postMessage({ id, ...pending.job });
  }
}
