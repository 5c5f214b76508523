import { describe, expect, it } from 'vitest';
import { WorkflowGraph } from './graph.js';
import { RunQueue } from './run-queue.js';
import { workflow } from './testing.js';
import type { Item } from './types.js';

const item = (n: number): Item => ({ json: { n } });

/** A and B feed Merge's inputs 0 and 1; A also feeds C. */
const graph = new WorkflowGraph(
  workflow(
    [
      { name: 'A', type: 'noOp' },
      { name: 'B', type: 'noOp' },
      { name: 'C', type: 'noOp' },
      { name: 'Merge', type: 'merge' },
    ],
    [
      ['A', 'Merge', 0, 0],
      ['A', 'C', 0, 0],
      ['B', 'Merge', 0, 1],
    ],
  ),
);

describe('RunQueue', () => {
  it('queues the children of every output that holds items, in order', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('A', [[item(1)], []], 3);
    expect(queue.next()).toEqual({
      node: 'Merge',
      input: [item(1)],
      inputIndex: 0,
      from: { name: 'A', outputIndex: 0, runIndex: 3 },
    });
    expect(queue.next()?.node).toBe('C');
    expect(queue.next()).toBeUndefined();
    queue.pushChildren('A', [[]], 4);
    expect(queue.next()).toBeUndefined();
  });

  it('holds a merge input until every connected input has arrived', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('A', [[item(1)]], 0);
    queue.pushChildren('B', [[item(2)]], 0);
    const first = queue.next();
    expect(first && queue.inputsOf(first, 2)).toBeNull();
    expect(queue.next()?.node).toBe('C');
    const second = queue.next();
    expect(second && queue.inputsOf(second, 2)).toEqual([[item(1)], [item(2)]]);
    expect(second?.sources).toEqual([
      { name: 'A', outputIndex: 0, runIndex: 0 },
      { name: 'B', outputIndex: 0, runIndex: 0 },
    ]);
    expect(queue.next()).toBeUndefined();
  });

  it('runs a merge still missing an input with what it has once the queue is empty', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('B', [[item(2)]], 0);
    const entry = queue.next();
    expect(entry && queue.inputsOf(entry, 2)).toBeNull();
    const flushed = queue.next();
    expect(flushed).toEqual({ node: 'Merge', input: [], flushed: [[], [item(2)]] });
    expect(flushed && queue.inputsOf(flushed, 2)).toEqual([[], [item(2)]]);
    expect(queue.next()).toBeUndefined();
  });

  it('gives a single-input node its entry as it is, padding a flushed one to the input count', () => {
    const queue = new RunQueue(graph);
    expect(queue.inputsOf({ node: 'C', input: [item(1)] }, 1)).toEqual([[item(1)]]);
    expect(queue.inputsOf({ node: 'Merge', input: [], flushed: [[item(1)]] }, 3)).toEqual([
      [item(1)],
      [],
      [],
    ]);
  });

  it('lists what is queued and buffered as resume entries, keeping it (checkpoint)', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('B', [[item(2)]], 0);
    const entry = queue.next();
    if (entry) queue.inputsOf(entry, 2);
    queue.push({ node: 'Merge', input: [], flushed: [[item(1)], []] });
    const pending = [
      { node: 'Merge', input: [], inputs: [[item(1)], []] },
      { node: 'Merge', input: [item(2)], inputIndex: 1 },
    ];
    expect(queue.pending()).toEqual(pending);
    expect(queue.pending()).toEqual(pending);
  });

  it('hands over what is queued and buffered when the run pauses, letting the buffer go', () => {
    const queue = new RunQueue(graph);
    queue.pushChildren('B', [[item(2)]], 0);
    const entry = queue.next();
    if (entry) queue.inputsOf(entry, 2);
    queue.pushChildren('A', [[item(1)]], 0);
    expect(queue.drain().map((e) => [e.node, e.inputIndex])).toEqual([
      ['Merge', 0],
      ['C', 0],
      ['Merge', 1],
    ]);
    expect(queue.pending().map((e) => [e.node, e.inputIndex])).toEqual([
      ['Merge', 0],
      ['C', 0],
    ]);
  });
});
