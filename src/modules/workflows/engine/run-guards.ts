import type { NodeRun } from './node-runner.js';
import type { RunContext, RunState } from './types.js';

/** Why a run ended `canceled` when stopped through the API. */
export const STOPPED = 'The execution was stopped';

export function timeoutMessage(deadline: { seconds: number }): string {
  return `The execution ran past its executionTimeout (${deadline.seconds} s) and was stopped`;
}

/**
 * Why no further node may start: the execution was stopped, or its deadline (ms since the epoch) is
 * past `now`; null when the run goes on.
 */
export function stopReason(
  ctx: Pick<RunContext, 'stopSignal' | 'deadline'>,
  now = Date.now(),
): string | null {
  if (ctx.stopSignal?.aborted) return STOPPED;
  if (ctx.deadline && now > ctx.deadline.at) return timeoutMessage(ctx.deadline);
  return null;
}

/**
 * Counts one more node run in `state`, over the whole execution (so a loop pausing at a Wait on each
 * round is bounded too); the error once the count passes `max`, else null.
 */
export function countNodeRun(state: RunState, max: number): string | null {
  state.nodeRuns = (state.nodeRuns ?? 0) + 1;
  if (state.nodeRuns <= max) return null;
  return `The execution exceeded the limit of ${max} node runs (WORKFLOW_MAX_NODE_RUNS); is there an endless loop?`;
}

/**
 * A node's run, unless the execution's deadline passes or it is stopped first: then the run ends at
 * once and the node is left to end within its own bounds (n8n cancels the node's promise likewise).
 */
export function interruptible(
  work: Promise<NodeRun>,
  ctx: Pick<RunContext, 'stopSignal' | 'deadline'>,
): Promise<NodeRun | { interrupted: string }> {
  const { deadline, stopSignal } = ctx;
  if (!deadline && !stopSignal) return work;
  if (stopSignal?.aborted) return Promise.resolve({ interrupted: STOPPED });
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(timer);
      stopSignal?.removeEventListener('abort', onStop);
    };
    const onStop = () => {
      settle();
      resolve({ interrupted: STOPPED });
    };
    if (deadline)
      timer = setTimeout(
        () => {
          settle();
          resolve({ interrupted: timeoutMessage(deadline) });
        },
        Math.max(0, deadline.at - Date.now()),
      );
    stopSignal?.addEventListener('abort', onStop, { once: true });
    work.then(
      (done) => {
        settle();
        resolve(done);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}
