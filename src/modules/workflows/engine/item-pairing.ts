import type { PendingEntry } from './run-state.js';
import type { Item, RunSource, RunState } from './types.js';

/** Where a node run's items came from: one origin (`inputIndex`, `from`), or one per input (`sources`). */
export interface RunOrigin {
  inputIndex?: number;
  from?: PendingEntry['from'];
  sources?: Array<PendingEntry['from'] | null>;
}

/** Output items their node paired itself (n8n honours a node's own pairedItem): kept as the node set them. */
const nodePaired = new WeakSet<Item>();

/**
 * An output item its node pairs to input item `item` itself (n8n's `pairedItem: {item}` set by a
 * node): a row read for that item, a classifier's answer on one of its outputs. The engine keeps it.
 */
export function pairedTo(json: Item['json'], item: number, rest: Pick<Item, 'binary'> = {}): Item {
  const out: Item = { ...rest, json, pairedItem: { item } };
  nodePaired.add(out);
  return out;
}

/**
 * n8n's pairedItem, set by the engine (unless the node paired the item itself, `pairedTo`): an
 * output item that is one of the node's input items (IF,
 * Filter, Switch, Sort, Limit, Merge pass them on) points at it; otherwise, as n8n assigns it for nodes
 * that do not, every output item points at the only input item, or at the input item at its position
 * when an output has as many items as the first input. Items are copied, never changed in place: the
 * same object is another node's output too.
 */
export function pairOutputs(inputs: Item[][], outputs: Item[][]): Item[][] {
  const origin = new Map<Item, { item: number; input?: number }>();
  let total = 0;
  inputs.forEach((list, input) => {
    total += list.length;
    list.forEach((item, index) => {
      if (!origin.has(item)) origin.set(item, input === 0 ? { item: index } : { item: index, input });
    });
  });
  const firstLength = inputs[0]?.length ?? 0;
  return outputs.map((list) =>
    list.map((item, index) => {
      const known = origin.get(item);
      const own = nodePaired.has(item) ? item.pairedItem : undefined;
      if (!known && own && own.item < (inputs[own.input ?? 0]?.length ?? 0)) return item;
      const pairedItem =
        known ?? (total === 1 ? { item: 0 } : list.length === firstLength ? { item: index } : undefined);
      if (pairedItem) return { ...item, pairedItem };
      if (item.pairedItem === undefined) return item;
      const { pairedItem: _stale, ...rest } = item;
      return rest;
    }),
  );
}

/** Where each input of a node run came from, as n8n's task data `source`. */
export function sourcesOf(origin: RunOrigin, inputCount: number): Array<RunSource | null> {
  const froms =
    origin.sources ??
    Array.from({ length: Math.max(inputCount, 1) }, (_, i) =>
      i === (origin.inputIndex ?? 0) ? origin.from : undefined,
    );
  return froms.map((from) =>
    from
      ? { previousNode: from.name, previousNodeOutput: from.outputIndex, previousNodeRun: from.runIndex }
      : null,
  );
}

/**
 * The item of node `name` that input item `index` of the running node comes from, following
 * pairedItem and the runs' sources back (n8n's `$('Node').item`); undefined when the lineage breaks.
 */
export function pairedItemOf(
  state: RunState,
  origin: RunOrigin,
  inputs: Item[][],
  name: string,
  index: number,
): Item | undefined {
  const inputIndex = origin.sources ? 0 : (origin.inputIndex ?? 0);
  let item = (inputs[inputIndex] ?? inputs[0])?.[index];
  const from = origin.sources ? origin.sources[0] : origin.from;
  let at = from ? { node: from.name, output: from.outputIndex, run: from.runIndex } : undefined;
  for (let steps = 0; item && at && steps < 1_000; steps++) {
    if (at.node === name) return item;
    const paired = item.pairedItem;
    if (!paired) return undefined;
    const source = state.runData[at.node]?.[at.run]?.source?.[paired.input ?? 0];
    if (!source) return undefined;
    item =
      state.runData[source.previousNode]?.[source.previousNodeRun]?.output[source.previousNodeOutput]?.[
        paired.item
      ];
    at = { node: source.previousNode, output: source.previousNodeOutput, run: source.previousNodeRun };
  }
  return undefined;
}
