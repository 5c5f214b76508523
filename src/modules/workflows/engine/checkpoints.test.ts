import { describe, expect, it } from 'vitest';
import { checkpointState, NodeCheckpoints } from './checkpoints.js';
import { WorkflowGraph } from './graph.js';
import { RunQueue } from './run-queue.js';
import { emptyRunState } from './run-state.js';
import { fixedNow, workflow } from './testing.js';
import type { RunState } from './types.js';

const graph = new WorkflowGraph(
  workflow(
    [
      { name: 'A', type: 'noOp' },
      { name: 'B', type: 'noOp' },
    ],
    [['A', 'B']],
  ),
);

describe('checkpointState', () => {
  it('puts the node first with all its inputs and tries, then the queue; its run not counted yet', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('A', [[{ json: { n: 2 } }]], 0);
    const state: RunState = { ...emptyRunState(), nodeRuns: 4, error: { message: 'old' } };
    const from = { name: 'T', outputIndex: 0, runIndex: 0 };
    const point = checkpointState(state, queue, { node: 'A', input: [], from }, [[{ json: { n: 1 } }]], 2);
    expect(point.error).toBeNull();
    expect(point.nodeRuns).toBe(3);
    expect(point.pending).toEqual([
      { node: 'A', input: [], inputs: [[{ json: { n: 1 } }]], from, attempt: 2 },
      {
        node: 'B',
        input: [{ json: { n: 2 } }],
        inputIndex: 0,
        from: { name: 'A', outputIndex: 0, runIndex: 0 },
      },
    ]);
    expect(state.error).toEqual({ message: 'old' });
    expect(queue.pending()).toHaveLength(1);
  });
});

describe('NodeCheckpoints', () => {
  function stored() {
    const calls: Array<[string, RunState, Date] | ['clear']> = [];
    const ctx = {
      checkpoint: async (state: RunState, at: Date) => {
        calls.push(['store', state, at]);
      },
      clearCheckpoint: async () => {
        calls.push(['clear']);
      },
    };
    const points = new NodeCheckpoints(
      ctx,
      () => fixedNow,
      (tries) => ({ ...emptyRunState(), nodeRuns: tries ?? 0 }),
    );
    return { calls, points };
  }

  it('stores one before a node that asks, due now, and drops it after', async () => {
    const { calls, points } = stored();
    await points.beforeNode(() => true);
    await points.clear();
    expect(calls).toEqual([['store', { ...emptyRunState(), nodeRuns: 0 }, fixedNow], ['clear']]);
  });

  it('stores none, and drops none, for a node that does not ask', async () => {
    const { calls, points } = stored();
    await points.beforeNode(() => false);
    await points.clear();
    expect(calls).toEqual([]);
  });

  it('stores one before each retry, due when the retry is', async () => {
    const { calls, points } = stored();
    await points.retryHook().beforeRetry?.(1, 1_500);
    await points.clear();
    expect(calls).toEqual([
      ['store', { ...emptyRunState(), nodeRuns: 1 }, new Date(fixedNow.getTime() + 1_500)],
      ['clear'],
    ]);
  });

  it('asks nothing of a run context that takes no checkpoints', async () => {
    let asked = false;
    const points = new NodeCheckpoints(
      {},
      () => fixedNow,
      () => emptyRunState(),
    );
    await points.beforeNode(() => {
      asked = true;
      return true;
    });
    expect(asked).toBe(false);
    expect(points.retryHook()).toEqual({});
    await points.clear();
  });
});
