import { describe, expect, it } from 'vitest';
import { pairedItemOf, pairedTo, pairOutputs, sourcesOf } from './item-pairing.js';
import { emptyRunState } from './run-state.js';
import type { Item, RunState } from './types.js';

const item = (n: number): Item => ({ json: { n } });

describe('pairOutputs', () => {
  it('points an item passed on at its place among the inputs, on any input', () => {
    const a = item(1);
    const b = item(2);
    const c = item(3);
    const [out] = pairOutputs([[a, b], [c]], [[c, b]]);
    expect(out).toEqual([
      { json: { n: 3 }, pairedItem: { item: 0, input: 1 } },
      { json: { n: 2 }, pairedItem: { item: 1 } },
    ]);
  });

  it('copies items, never changing the input objects', () => {
    const a = item(1);
    const [out] = pairOutputs([[a]], [[a]]);
    expect(out?.[0]).not.toBe(a);
    expect(a).toEqual({ json: { n: 1 } });
  });

  it('points new items at the only input item', () => {
    const [out] = pairOutputs([[item(1)]], [[item(7), item(8)]]);
    expect(out?.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }]);
  });

  it('points new items at the input item at their position when the counts match', () => {
    const [out] = pairOutputs([[item(1), item(2)]], [[item(7), item(8)]]);
    expect(out?.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
  });

  it('drops a stale pairedItem when no input item matches', () => {
    const stale: Item = { json: { n: 9 }, pairedItem: { item: 5 } };
    const [out] = pairOutputs([[item(1), item(2)]], [[stale]]);
    expect(out).toEqual([{ json: { n: 9 } }]);
  });

  it("keeps a node's own pairing (pairedTo) over position, unless it names no input item", () => {
    const inputs = [[item(1), item(2), item(3)]];
    const [first, second] = pairOutputs(inputs, [
      [pairedTo({ n: 7 }, 2), pairedTo({ n: 8 }, 2)],
      [pairedTo({ n: 9 }, 5)],
    ]);
    expect(first?.map((i) => i.pairedItem)).toEqual([{ item: 2 }, { item: 2 }]);
    expect(second).toEqual([{ json: { n: 9 } }]);
  });

  it('pairs every output of the node', () => {
    const a = item(1);
    const b = item(2);
    expect(pairOutputs([[a, b]], [[b], [a]])).toEqual([
      [{ json: { n: 2 }, pairedItem: { item: 1 } }],
      [{ json: { n: 1 }, pairedItem: { item: 0 } }],
    ]);
  });
});

describe('sourcesOf', () => {
  const from = { name: 'A', outputIndex: 1, runIndex: 2 };

  it('gives a trigger input no source', () => {
    expect(sourcesOf({ inputIndex: 0 }, 1)).toEqual([null]);
  });

  it('puts the origin on the input it arrived on', () => {
    expect(sourcesOf({ inputIndex: 1, from }, 2)).toEqual([
      null,
      { previousNode: 'A', previousNodeOutput: 1, previousNodeRun: 2 },
    ]);
  });

  it('takes the sources of a merge as collected', () => {
    const other = { name: 'B', outputIndex: 0, runIndex: 0 };
    expect(sourcesOf({ sources: [other, null] }, 2)).toEqual([
      { previousNode: 'B', previousNodeOutput: 0, previousNodeRun: 0 },
      null,
    ]);
  });
});

describe('pairedItemOf', () => {
  /** Trigger T → A → B, each run recorded with its sources and paired items. */
  function chain(): RunState {
    const state = emptyRunState();
    state.runData.T = [{ startTime: '', executionTime: 0, input: [], output: [[item(1), item(2)]] }];
    state.runData.A = [
      {
        startTime: '',
        executionTime: 0,
        input: [],
        output: [[{ json: { a: 1 }, pairedItem: { item: 1 } }]],
        source: [{ previousNode: 'T', previousNodeOutput: 0, previousNodeRun: 0 }],
      },
    ];
    return state;
  }

  it('follows pairedItem and sources back to the named node', () => {
    const state = chain();
    const inputs = [state.runData.A?.[0]?.output[0] ?? []];
    const from = { name: 'A', outputIndex: 0, runIndex: 0 };
    expect(pairedItemOf(state, { from }, inputs, 'A', 0)).toEqual({
      json: { a: 1 },
      pairedItem: { item: 1 },
    });
    expect(pairedItemOf(state, { from }, inputs, 'T', 0)).toEqual({ json: { n: 2 } });
  });

  it('is undefined where the lineage breaks or the node is not upstream', () => {
    const state = chain();
    const from = { name: 'A', outputIndex: 0, runIndex: 0 };
    expect(pairedItemOf(state, { from }, [[{ json: {} }]], 'T', 0)).toBeUndefined();
    expect(pairedItemOf(state, { from }, [state.runData.A?.[0]?.output[0] ?? []], 'Z', 0)).toBeUndefined();
    expect(pairedItemOf(state, {}, [[item(1)]], 'T', 0)).toBeUndefined();
  });

  it('follows a merge from its first input', () => {
    const state = chain();
    const from = { name: 'A', outputIndex: 0, runIndex: 0 };
    const inputs = [state.runData.A?.[0]?.output[0] ?? [], [item(5)]];
    expect(pairedItemOf(state, { sources: [from, null], inputIndex: 1 }, inputs, 'T', 0)).toEqual({
      json: { n: 2 },
    });
  });
});
