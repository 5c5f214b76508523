/**
 * Issue 27: the cost of giving every execution a pristine sandbox realm. A Code node call (n8n's Code
 * node runner, small input) on one sandbox worker, timed two ways in alternating rounds: every call in
 * the same realm (no restore: what sharing one context cost) and every call in a realm of its own (the
 * worker restores its QuickJS heap first: an execution's first call, the worst case). Median per call
 * and the ratio of the medians. Run alone: `BENCH_ONLY=sandbox node bench/run.js`.
 */
import { createExpressionSandbox } from '../../dist/modules/workflows/engine/expression-sandbox.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = 300;

// No scenario in the shared table: only the report below.
export default [];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const request = JSON.stringify({
  code: 'return $input.all().map((item) => ({ json: { ...item.json, total: item.json.a * 2 } }));',
  mode: 'runOnceForAllItems',
  data: {
    json: {},
    input: [{ json: { a: 1 } }, { json: { a: 2 } }],
    nodes: {},
    paired: {},
    itemIndex: 0,
    runIndex: 0,
    workflow: { id: 'wf', name: 'bench' },
    execution: { id: 'exe', mode: 'webhook', resumeUrl: '' },
    env: {},
    vars: {},
    now: new Date().toISOString(),
  },
  limits: { resultChars: 1_000_000, depth: 100, logLines: 10, logChars: 100 },
});

/** Milliseconds per call over CALLS calls; `realm(i)` names each call's realm. */
async function perCall(pool, realm) {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++)
    await pool.call('runCode', request, 5_000, { tenant: 'bench', realm: realm(i) });
  return (performance.now() - t0) / CALLS;
}

export async function report() {
  const pool = createExpressionSandbox({ workers: 1, memoryMb: 64 });
  try {
    await perCall(pool, () => 'warm');
    const shared = [];
    const fresh = [];
    let n = 0;
    for (let r = 0; r < ROUNDS; r++) {
      shared.push(await perCall(pool, () => 'one execution'));
      fresh.push(await perCall(pool, () => `execution ${n++}`));
    }
    const a = median(shared);
    const b = median(fresh);
    return [
      `sandbox: Code node call, same realm ${a.toFixed(3)} ms · own realm (heap restored) ${b.toFixed(3)} ms · ratio ${(b / a).toFixed(2)}× (+${(b - a).toFixed(3)} ms per execution's first call)`,
    ];
  } finally {
    await pool.close();
  }
}
