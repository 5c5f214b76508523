import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../../core/errors.js';
import { TenantTurns } from '../../../core/fairness/tenant-turns.js';

export interface WorkerBounds {
  timeoutMs: number;
  heapMb: number;
  /** Names the input in errors: `The ${what} took longer than …`. */
  what: string;
  /** Whose read it is (an account): reads wait their turn by account when every slot is busy. */
  tenant?: string;
}

/**
 * Parser workers running at once in this process (each may hold its heap bound and a core): uploads,
 * workflow nodes and AI tools all read through here, so a burst of them queues instead of starting a
 * worker each. Waiting reads are served in turn by account, a bounded number each.
 */
const SLOTS = Math.max(2, Math.min(4, availableParallelism() - 1));
const MAX_WAITING = 200;
const MAX_WAITING_PER_TENANT = 20;
let running = 0;
interface Waiter {
  go: () => void;
  refuse: (error: AppError) => void;
}
const turns = new TenantTurns<Waiter>();

const busy = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'Too many documents are being read; try again',
    {},
    { 'retry-after': '5' },
  );

/** A slot for one worker, waiting (at most `timeoutMs`) in the account's turn when all are taken. */
function slot(tenant: string, timeoutMs: number, what: string): Promise<void> {
  if (running < SLOTS && turns.waiting === 0) {
    running++;
    return Promise.resolve();
  }
  const { admitted, evicted } = turns.admit(tenant, MAX_WAITING, MAX_WAITING_PER_TENANT);
  if (!admitted) return Promise.reject(busy());
  evicted?.refuse(busy());
  return new Promise<void>((resolve, reject) => {
    const waiter: Waiter = {
      go: () => {
        clearTimeout(timer);
        resolve();
      },
      refuse: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    };
    const timer = setTimeout(() => {
      if (turns.remove(tenant, waiter))
        reject(new AppError('UNPROCESSABLE', `The ${what} waited longer than ${timeoutMs} ms to be read`));
    }, timeoutMs);
    turns.push(tenant, waiter);
  });
}

/** Hands the slot to the next waiting read in turn, or frees it. */
function release(): void {
  const next = turns.take();
  if (next) next.item.go();
  else running--;
}

/** Reads running and waiting now (for tests and metrics). */
export const workerSlots = () => ({ slots: SLOTS, running, waiting: turns.waiting });

/**
 * Runs a parser's worker (plain JS, which posts one message) on one input, bounded in heap and time: a
 * hostile input costs that thread, which is terminated, never the server's event loop. One worker per
 * call: a worker that ran out of memory or time is simply thrown away.
 */
export async function runInWorker<T>(
  url: URL,
  workerData: unknown,
  transferList: ArrayBuffer[],
  bounds: WorkerBounds,
): Promise<T> {
  await slot(bounds.tenant ?? '', bounds.timeoutMs, bounds.what);
  try {
    return await startWorker<T>(url, workerData, transferList, bounds);
  } finally {
    release();
  }
}

function startWorker<T>(
  url: URL,
  workerData: unknown,
  transferList: ArrayBuffer[],
  bounds: WorkerBounds,
): Promise<T> {
  const worker = new Worker(url, {
    workerData,
    transferList,
    resourceLimits: { maxOldGenerationSizeMb: bounds.heapMb, maxYoungGenerationSizeMb: 32 },
    stdout: true, // parsers warn on stdout about odd inputs; that is not the server's log
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(
            new AppError(
              'UNPROCESSABLE',
              `The ${bounds.what} took longer than ${bounds.timeoutMs} ms to read`,
              {
                timeoutMs: bounds.timeoutMs,
              },
            ),
          ),
        ),
      bounds.timeoutMs,
    );
    worker.on('message', (msg: T) => settle(() => resolve(msg)));
    worker.on('error', (err: Error & { code?: string }) =>
      settle(() =>
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new AppError('UNPROCESSABLE', `The ${bounds.what} needs too much memory to read`)
            : new AppError('UNPROCESSABLE', `The ${bounds.what} could not be read`, { reason: err.message }),
        ),
      ),
    );
    worker.on('exit', (code) =>
      settle(() =>
        reject(
          new AppError('UNPROCESSABLE', `The ${bounds.what} could not be read`, {
            reason: `worker exited (${code})`,
          }),
        ),
      ),
    );
  });
}
