import type { WorkflowGraph } from './graph.js';
import type { PendingEntry } from './run-state.js';
import type { Item } from './types.js';

type From = PendingEntry['from'];

/** A queued node run; `flushed` holds all inputs of a merge run with what it has, `sources` their origins. */
export type QueueEntry = PendingEntry & { flushed?: Item[][]; sources?: Array<From | null> };

/**
 * What runs next in one execution: node runs in order (breadth-first along connections), and what the
 * multi-input nodes (merge) received so far, with where each input came from, until all have arrived.
 */
export class RunQueue {
  private readonly entries: QueueEntry[] = [];
  private readonly buffered = new Map<string, Map<number, Item[]>>();
  private readonly bufferedFrom = new Map<string, Map<number, From>>();

  constructor(private readonly graph: WorkflowGraph) {}

  push(entry: QueueEntry): void {
    this.entries.push(entry);
  }

  /** Queues `outputs` (per output index) of run `runIndex` of `name` for the nodes they feed. */
  pushChildren(name: string, outputs: Item[][], runIndex: number): void {
    outputs.forEach((items, outputIndex) => {
      if (items.length === 0) return;
      for (const target of this.graph.children(name, outputIndex)) {
        this.entries.push({
          node: target.node,
          input: items,
          inputIndex: target.index,
          from: { name, outputIndex, runIndex },
        });
      }
    });
  }

  /** The next queued entry; when the queue is empty, a merge still missing an input runs with what it has. */
  next(): QueueEntry | undefined {
    const entry = this.entries.shift();
    if (entry) return entry;
    const first = this.buffered.keys().next();
    if (first.done) return undefined;
    const name = first.value;
    const inputs = this.buffered.get(name) ?? new Map<number, Item[]>();
    this.buffered.delete(name);
    const count = Math.max(0, ...inputs.keys()) + 1;
    return { node: name, input: [], flushed: Array.from({ length: count }, (_, i) => inputs.get(i) ?? []) };
  }

  /**
   * Inputs per index for `entry`'s node, which has `inputCount` inputs; null while a multi-input node
   * still waits for another connected input (then `entry`'s items are kept until it has them all).
   */
  inputsOf(entry: QueueEntry, inputCount: number): Item[][] | null {
    if (entry.flushed) return padInputs(entry.flushed, inputCount);
    if (inputCount <= 1) return [entry.input];
    const index = entry.inputIndex ?? 0;
    const got = this.buffered.get(entry.node) ?? new Map<number, Item[]>();
    got.set(index, [...(got.get(index) ?? []), ...entry.input]);
    const from = this.bufferedFrom.get(entry.node) ?? new Map<number, From>();
    from.set(index, entry.from);
    this.bufferedFrom.set(entry.node, from);
    if (!this.graph.connectedInputs(entry.node).every((i) => got.has(i))) {
      this.buffered.set(entry.node, got);
      return null;
    }
    this.buffered.delete(entry.node);
    this.bufferedFrom.delete(entry.node);
    entry.sources = Array.from({ length: inputCount }, (_, i) => from.get(i) ?? null);
    return padInputs(
      Array.from({ length: inputCount }, (_, i) => got.get(i) ?? []),
      inputCount,
    );
  }

  /** What is queued and buffered as resume entries (a checkpoint), the queue left as it is. */
  pending(): PendingEntry[] {
    const queued = this.entries.map(
      ({ flushed, ...rest }): PendingEntry => (flushed ? { ...rest, inputs: flushed } : rest),
    );
    return [...queued, ...this.bufferedEntries()];
  }

  /** The queue as it is, then the buffered inputs, which it lets go of (the run pauses). */
  drain(): PendingEntry[] {
    const out: PendingEntry[] = [...this.entries, ...this.bufferedEntries()];
    this.buffered.clear();
    return out;
  }

  private bufferedEntries(): PendingEntry[] {
    const out: PendingEntry[] = [];
    for (const [node, inputs] of this.buffered) {
      for (const [inputIndex, input] of inputs) out.push({ node, input, inputIndex });
    }
    return out;
  }
}

function padInputs(inputs: Item[][], count: number): Item[][] {
  const out = inputs.slice(0, Math.max(count, 1));
  while (out.length < count) out.push([]);
  return out;
}
