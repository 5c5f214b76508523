import type { RunNodeArgs } from './node-runner.js';
import type { QueueEntry, RunQueue } from './run-queue.js';
import type { PendingEntry } from './run-state.js';
import type { Item, RunContext, RunState } from './types.js';

/**
 * The run as a resume point at `entry`'s node: that node first (with all its inputs, and the tries
 * it made), then what was queued and buffered, unchanged. Its node run is not counted yet.
 */
export function checkpointState(
  state: RunState,
  queue: RunQueue,
  entry: QueueEntry,
  inputs: Item[][],
  tries?: number,
): RunState {
  const head: PendingEntry = {
    node: entry.node,
    input: [],
    inputs,
    ...(entry.from ? { from: entry.from } : {}),
    ...(tries ? { attempt: tries } : {}),
  };
  return {
    ...state,
    error: null,
    nodeRuns: Math.max(0, (state.nodeRuns ?? 1) - 1),
    pending: [head, ...queue.pending()],
  };
}

/**
 * The checkpoints of one node run, where the run context stores them: one before a node that asks
 * for it (a waited sub-workflow call), one before each retry's wait, due when the retry is; dropped
 * once the node run is over, if any was stored.
 */
export class NodeCheckpoints {
  private stored = false;

  /** `resumePoint(tries)`: the run state to store, as it is when the checkpoint is taken. */
  constructor(
    private readonly ctx: Pick<RunContext, 'checkpoint' | 'clearCheckpoint'>,
    private readonly now: () => Date,
    private readonly resumePoint: (tries?: number) => RunState,
  ) {}

  /** Stores a checkpoint before the node runs when the run context takes them and `wanted()` says so. */
  async beforeNode(wanted: () => boolean): Promise<void> {
    const checkpoint = this.ctx.checkpoint;
    if (!checkpoint || !wanted()) return;
    await checkpoint(this.resumePoint(), this.now());
    this.stored = true;
  }

  /** The node runner's `beforeRetry`, when the run context takes checkpoints. */
  retryHook(): Pick<RunNodeArgs, 'beforeRetry'> {
    const checkpoint = this.ctx.checkpoint;
    if (!checkpoint) return {};
    return {
      beforeRetry: async (tries: number, waitMs: number) => {
        const at = new Date(this.now().getTime() + waitMs);
        await checkpoint(this.resumePoint(tries), at);
        this.stored = true;
      },
    };
  }

  /** Drops the stored checkpoint, if any: the node run is over. */
  async clear(): Promise<void> {
    if (this.stored) await this.ctx.clearCheckpoint?.();
  }
}
