import type { Item, RunState } from './types.js';

/** Persistence-neutral run state: plain JSON the service stores as it likes. */
export const emptyRunState = (): RunState => ({
  runData: {},
  lastNodeExecuted: null,
  error: null,
  pending: [],
});

export type PendingEntry = RunState['pending'][number];

/** The first output item of each node's latest run (what `$node["Name"].json` reads). */
export function latestOutputs(state: RunState): Record<string, { json: Item['json'] }> {
  const out: Record<string, { json: Item['json'] }> = {};
  for (const [name, runs] of Object.entries(state.runData)) {
    const last = runs[runs.length - 1];
    if (!last) continue;
    const first = last.output.find((items) => items.length > 0)?.[0];
    out[name] = { json: first?.json ?? {} };
  }
  return out;
}

/** A deep copy, so that resuming never changes the caller's state. */
export const cloneRunState = (state: RunState): RunState => structuredClone(state);
