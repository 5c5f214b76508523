import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item, RunState } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const items = (...ns: number[]): Item[] => ns.map((n) => ({ json: { n } }));

const trigger = { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };
const loopNode = (parameters: Record<string, unknown>, name = 'Loop') => ({
  name,
  type: 'n8n-nodes-base.splitInBatches',
  typeVersion: 3,
  parameters,
});
/** Set 3.4 keeping the item and adding `seen` (computed, so it runs in the sandbox). */
const body = (name = 'Body', value = '={{ $json.n * 10 }}') => ({
  name,
  type: 'n8n-nodes-base.set',
  typeVersion: 3.4,
  parameters: {
    assignments: { assignments: [{ id: 'a', name: 'seen', value, type: 'number' }] },
    includeOtherFields: true,
    options: {},
  },
});
const final = { name: 'Final', type: 'n8n-nodes-base.noOp', typeVersion: 1 };

/** T → Loop; loop → Body → Loop; done → Final. */
const simpleLoop = (parameters: Record<string, unknown>) =>
  workflow(
    [trigger, loopNode(parameters), body(), final],
    [
      ['T', 'Loop'],
      ['Loop', 'Final', 0],
      ['Loop', 'Body', 1],
      ['Body', 'Loop'],
    ],
  );

const outputsOf = (state: RunState, name: string) =>
  (state.runData[name] ?? []).map((r) => r.output.map((o) => o.map((i) => i.json.n)));

describe('n8n-nodes-base.splitInBatches v3 (Loop Over Items)', () => {
  it('sends one item per round on loop, then every processed item on done', async () => {
    const out = await engine.run(
      simpleLoop({ batchSize: 1, options: {} }),
      { nodeName: 'T', items: items(1, 2, 3) },
      ctx,
    );
    expect(out.status).toBe('success');
    // n8n's outputs per run: [done, loop].
    expect(outputsOf(out.state, 'Loop')).toEqual([
      [[], [1]],
      [[], [2]],
      [[], [3]],
      [[1, 2, 3], []],
    ]);
    expect((out.state.runData.Body ?? []).map((r) => r.input.map((i) => i.json.n))).toEqual([[1], [2], [3]]);
    expect(jsonOf(out.state, 'Final')).toEqual([
      { n: 1, seen: 10 },
      { n: 2, seen: 20 },
      { n: 3, seen: 30 },
    ]);
    expect(out.state.lastNodeExecuted).toBe('Final');
    expect(out.state.runData.Final).toHaveLength(1);
    expect(out.state.nodeContext?.Loop).toMatchObject({
      currentRunIndex: 3,
      maxRunIndex: 3,
      noItemsLeft: true,
      done: true,
    });
  });

  it('batches by batchSize, the last batch holding the rest', async () => {
    const out = await engine.run(
      simpleLoop({ splitInBatchesNotice: '', batchSize: 3, options: {} }),
      { nodeName: 'T', items: items(1, 2, 3, 4, 5, 6, 7) },
      ctx,
    );
    expect(outputsOf(out.state, 'Loop')).toEqual([
      [[], [1, 2, 3]],
      [[], [4, 5, 6]],
      [[], [7]],
      [[1, 2, 3, 4, 5, 6, 7], []],
    ]);
    expect(jsonOf(out.state, 'Final').map((j) => j.seen)).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it('takes an expression for batchSize and evaluates it on the first item', async () => {
    const out = await engine.run(
      simpleLoop({ batchSize: '={{ $json.n + 1 }}', options: {} }),
      { nodeName: 'T', items: items(1, 2, 3) },
      ctx,
    );
    // First run: item 1 → size 2; second run: item 1 (back from the body) → size 2 again.
    expect(outputsOf(out.state, 'Loop')).toEqual([
      [[], [1, 2]],
      [[], [3]],
      [[1, 2, 3], []],
    ]);
  });

  /** T → Outer; Outer.loop → Split Out → Inner; Inner.loop → Body → Inner; Inner.done → Outer; Outer.done → Final. */
  const nested = (innerOptions: Record<string, unknown>) =>
    workflow(
      [
        trigger,
        loopNode({ batchSize: 1, options: {} }, 'Outer'),
        {
          name: 'Split Out',
          type: 'n8n-nodes-base.splitOut',
          typeVersion: 1,
          parameters: { fieldToSplitOut: 'list', options: {} },
        },
        loopNode({ batchSize: 1, options: innerOptions }, 'Inner'),
        body(),
        final,
      ],
      [
        ['T', 'Outer'],
        ['Outer', 'Final', 0],
        ['Outer', 'Split Out', 1],
        ['Split Out', 'Inner'],
        ['Inner', 'Outer', 0],
        ['Inner', 'Body', 1],
        ['Body', 'Inner'],
      ],
    );
  const groups: Item[] = [{ json: { list: [{ n: 1 }, { n: 2 }] } }, { json: { list: [{ n: 3 }] } }];

  it('resets an inner loop when options.reset says so (an expression, read on each run)', async () => {
    const out = await engine.run(
      nested({ reset: "={{ $prevNode.name === 'Split Out' }}" }),
      { nodeName: 'T', items: groups },
      ctx,
    );
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'Final')).toEqual([
      { n: 1, seen: 10 },
      { n: 2, seen: 20 },
      { n: 3, seen: 30 },
    ]);
  });

  it("keeps n8n's context without reset: the inner loop's second set is done at once, unprocessed", async () => {
    const out = await engine.run(nested({}), { nodeName: 'T', items: groups }, ctx);
    expect(out.status).toBe('success');
    expect(outputsOf(out.state, 'Inner').at(-1)).toEqual([[1, 2, 3], []]);
    expect(jsonOf(out.state, 'Final')).toEqual([
      { n: 1, seen: 10 },
      { n: 2, seen: 20 },
      { n: 1, seen: 10 },
      { n: 2, seen: 20 },
      { n: 3 },
    ]);
  });

  it('keeps its context in RunState across a Wait in the loop, as plain JSON', async () => {
    const def = workflow(
      [
        trigger,
        loopNode({ batchSize: 2, options: {} }),
        {
          name: 'Wait',
          type: 'n8n-nodes-base.wait',
          typeVersion: 1.1,
          parameters: { amount: 1, unit: 'hours' },
        },
        body(),
        final,
      ],
      [
        ['T', 'Loop'],
        ['Loop', 'Final', 0],
        ['Loop', 'Wait', 1],
        ['Wait', 'Body'],
        ['Body', 'Loop'],
      ],
    );
    let out = await engine.run(def, { nodeName: 'T', items: items(1, 2, 3) }, ctx);
    const pauses: number[] = [];
    while (out.status === 'waiting') {
      pauses.push(out.lastItems.length);
      // Stored and read back as the service does (possibly by another process).
      const stored = JSON.parse(JSON.stringify(out.state)) as RunState;
      out = await engine.resume(def, stored, null, ctx);
    }
    expect(out.status).toBe('success');
    expect(pauses).toEqual([2, 1]);
    expect(jsonOf(out.state, 'Final').map((j) => j.seen)).toEqual([10, 20, 30]);
    // T, Loop × 3, Wait × 2 (counted once each, not again on resume), Body × 2, Final.
    expect(out.state.nodeRuns).toBe(9);
  });

  it('refuses unknown parameters, a batch size below 1 and a non-boolean reset', () => {
    const problems = (parameters: Record<string, unknown>) =>
      engine.validate(simpleLoop(parameters)).map((p) => `${p.path} ${p.message}`);
    expect(problems({ batchSize: 2, options: {} })).toEqual([]);
    const bogus = problems({ batchSize: 2, bogus: 1 });
    expect(bogus).toHaveLength(1);
    expect(bogus[0]).toMatch(/^nodes\[1\]\.parameters\.bogus is not a parameter of /);
    const other = problems({ options: { reset: true, other: 1 } });
    expect(other).toHaveLength(1);
    expect(other[0]).toMatch(/^nodes\[1\]\.parameters\.options\.other is not a parameter of /);
    expect(problems({ batchSize: 0 })[0]).toMatch(/^nodes\[1\]\.parameters\.batchSize /);
    expect(problems({ options: { reset: 'yes' } })[0]).toMatch(/^nodes\[1\]\.parameters\.options\.reset /);
  });

  it('fails the node at run time when batchSize evaluates below 1', async () => {
    const out = await engine.run(
      simpleLoop({ batchSize: '={{ $json.n - 5 }}' }),
      { nodeName: 'T', items: items(1) },
      ctx,
    );
    expect(out.status).toBe('error');
    expect(out.state.error?.node).toBe('Loop');
    expect(out.state.error?.message).toMatch(/Invalid parameters: .*batchSize/);
  });
});

describe('the node-run limit (EngineDeps.maxNodeRuns)', () => {
  /** A cycle that never ends: A → B → A. */
  const endless = workflow(
    [
      trigger,
      { name: 'A', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      { name: 'B', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
    ],
    [
      ['T', 'A'],
      ['A', 'B'],
      ['B', 'A'],
    ],
  );

  it('fails the run naming the limit when exceeded', async () => {
    const small = new WorkflowEngine(testDeps({ maxNodeRuns: 25 }), defaultNodeRegistry);
    const out = await small.run(endless, { nodeName: 'T', items: items(1) }, ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toBe(
      'The execution exceeded the limit of 25 node runs (WORKFLOW_MAX_NODE_RUNS); is there an endless loop?',
    );
    expect(out.state.nodeRuns).toBe(26);
    const ran = Object.values(out.state.runData).reduce((n, runs) => n + runs.length, 0);
    expect(ran).toBe(25);
  });

  it('lets a run of exactly the limit finish', async () => {
    const def = simpleLoop({ batchSize: 1 });
    // T, 3 × (Loop + Body), the final Loop run and Final: 9 runs.
    const exact = await new WorkflowEngine(testDeps({ maxNodeRuns: 9 }), defaultNodeRegistry).run(
      def,
      { nodeName: 'T', items: items(1, 2, 3) },
      ctx,
    );
    expect(exact.status).toBe('success');
    const over = await new WorkflowEngine(testDeps({ maxNodeRuns: 8 }), defaultNodeRegistry).run(
      def,
      { nodeName: 'T', items: items(1, 2, 3) },
      ctx,
    );
    expect(over.status).toBe('error');
    expect(over.state.error).toMatchObject({ node: 'Final' });
  });

  it('counts the runs of every stretch of a paused execution', async () => {
    const def = workflow(
      [
        trigger,
        loopNode({ batchSize: 1 }),
        {
          name: 'Wait',
          type: 'n8n-nodes-base.wait',
          typeVersion: 1.1,
          parameters: { amount: 1, unit: 'hours' },
        },
        final,
      ],
      [
        ['T', 'Loop'],
        ['Loop', 'Final', 0],
        ['Loop', 'Wait', 1],
        ['Wait', 'Loop'],
      ],
    );
    const small = new WorkflowEngine(testDeps({ maxNodeRuns: 6 }), defaultNodeRegistry);
    let out = await small.run(def, { nodeName: 'T', items: items(1, 2, 3, 4) }, ctx);
    while (out.status === 'waiting') out = await small.resume(def, out.state, null, ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/limit of 6 node runs/);
  });
});
