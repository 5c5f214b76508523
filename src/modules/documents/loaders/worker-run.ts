import { Worker } from 'node:worker_threads';
import { AppError } from '../../../core/errors.js';

export interface WorkerBounds {
  timeoutMs: number;
  heapMb: number;
  /** Names the input in errors: `The ${what} took longer than …`. */
  what: string;
}

/**
 * Runs a parser's worker (plain JS, which posts one message) on one input, bounded in heap and time: a
 * hostile input costs that thread, which is terminated, never the server's event loop. One worker per
 * call: a worker that ran out of memory or time is simply thrown away.
 */
export function runInWorker<T>(
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
