import { describe, expect, it } from 'vitest';
import type { NodeRun } from './node-runner.js';
import { countNodeRun, interruptible, STOPPED, stopReason, timeoutMessage } from './run-guards.js';
import { emptyRunState } from './run-state.js';

const nodeRun = (): NodeRun => ({
  runData: { startTime: '2030-01-01T00:00:00.000Z', executionTime: 1, input: [], output: [[]] },
  result: { kind: 'output', output: [[]] },
});

describe('stopReason', () => {
  it('lets the run go on without a stop signal or deadline', () => {
    expect(stopReason({})).toBeNull();
  });

  it('stops on an aborted signal, before the deadline is looked at', () => {
    const stop = new AbortController();
    stop.abort();
    expect(stopReason({ stopSignal: stop.signal, deadline: { at: 0, seconds: 1 } }, 10)).toBe(STOPPED);
  });

  it('ends the run only once the deadline is past', () => {
    const deadline = { at: 1_000, seconds: 30 };
    expect(stopReason({ deadline }, 1_000)).toBeNull();
    expect(stopReason({ deadline }, 1_001)).toBe(
      'The execution ran past its executionTimeout (30 s) and was stopped',
    );
  });
});

describe('countNodeRun', () => {
  it('counts every node run and refuses the one past the limit', () => {
    const state = { ...emptyRunState(), nodeRuns: 1 };
    expect(countNodeRun(state, 2)).toBeNull();
    expect(state.nodeRuns).toBe(2);
    expect(countNodeRun(state, 2)).toBe(
      'The execution exceeded the limit of 2 node runs (WORKFLOW_MAX_NODE_RUNS); is there an endless loop?',
    );
    expect(state.nodeRuns).toBe(3);
  });

  it('starts from zero on a state that never counted', () => {
    const state = emptyRunState();
    expect(countNodeRun(state, 1)).toBeNull();
    expect(state.nodeRuns).toBe(1);
  });
});

describe('interruptible', () => {
  it('hands back the node run itself when nothing can interrupt it', async () => {
    const work = Promise.resolve(nodeRun());
    expect(interruptible(work, {})).toBe(work);
  });

  it('ends at once when the signal was aborted already', async () => {
    const stop = new AbortController();
    stop.abort();
    await expect(interruptible(new Promise<NodeRun>(() => {}), { stopSignal: stop.signal })).resolves.toEqual(
      {
        interrupted: STOPPED,
      },
    );
  });

  it('ends when stopped while the node runs, leaving the node behind', async () => {
    const stop = new AbortController();
    const ran = interruptible(new Promise<NodeRun>(() => {}), { stopSignal: stop.signal });
    stop.abort();
    await expect(ran).resolves.toEqual({ interrupted: STOPPED });
  });

  it('ends when the deadline passes while the node runs', async () => {
    const deadline = { at: Date.now() + 20, seconds: 7 };
    await expect(interruptible(new Promise<NodeRun>(() => {}), { deadline })).resolves.toEqual({
      interrupted: timeoutMessage(deadline),
    });
  });

  it('passes on the node run, or its error, that ends first', async () => {
    const stop = new AbortController();
    const deadline = { at: Date.now() + 60_000, seconds: 60 };
    const done = nodeRun();
    await expect(interruptible(Promise.resolve(done), { stopSignal: stop.signal, deadline })).resolves.toBe(
      done,
    );
    await expect(
      interruptible(Promise.reject(new Error('boom')), { stopSignal: stop.signal, deadline }),
    ).rejects.toThrow('boom');
    // Settled: a later stop changes nothing.
    stop.abort();
  });
});
