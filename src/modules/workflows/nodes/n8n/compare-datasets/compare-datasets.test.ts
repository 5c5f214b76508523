import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Input A and B come from two Code nodes; returns the four outputs. */
async function compare(a: unknown[], b: unknown[], parameters: Record<string, unknown>, typeVersion = 2.3) {
  const code = (rows: unknown[]) => ({ jsCode: `return ${JSON.stringify(rows)}.map((json) => ({ json }));` });
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'A', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: code(a) },
      { name: 'B', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: code(b) },
      { name: 'C', type: 'n8n-nodes-base.compareDatasets', typeVersion, parameters },
    ],
    [
      ['T', 'A'],
      ['T', 'B'],
      ['A', 'C', 0, 0],
      ['B', 'C', 0, 1],
    ],
  );
  const out = await engine.run(def, { nodeName: 'T', items: [{ json: {} }] }, ctx);
  return { outputs: [0, 1, 2, 3].map((i) => jsonOf(out.state, 'C', i)), error: out.state.error };
}

const byId = { mergeByFields: { values: [{ field1: 'id', field2: 'id' }] } };

describe('n8n-nodes-base.compareDatasets', () => {
  it('splits into A only, same, different (both versions by default from v2) and B only', async () => {
    const { outputs } = await compare(
      [
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
        { id: 3, v: 'c' },
      ],
      [
        { id: 2, v: 'b' },
        { id: 3, v: 'x' },
        { id: 4, v: 'd' },
      ],
      byId,
    );
    expect(outputs).toEqual([
      [{ id: 1, v: 'a' }],
      [{ id: 2, v: 'b' }],
      [{ keys: { id: 3 }, same: { id: 3 }, different: { v: { inputA: 'c', inputB: 'x' } } }],
      [{ id: 4, v: 'd' }],
    ]);
  });

  it('v1 prefers input B; fuzzy compare matches "1" with 1; mix takes named fields from the other side', async () => {
    expect((await compare([{ id: 1, v: 'a' }], [{ id: 1, v: 'b' }], byId, 1)).outputs[2]).toEqual([
      { id: 1, v: 'b' },
    ]);
    expect(
      (
        await compare([{ id: '1', v: 'a' }], [{ id: 1, v: 'a' }], {
          ...byId,
          options: { fuzzyCompare: true },
        })
      ).outputs[1],
    ).toEqual([{ id: '1', v: 'a' }]);
    expect(
      (
        await compare([{ id: 1, v: 'a', w: 1 }], [{ id: 1, v: 'b', w: 2 }], {
          ...byId,
          resolve: 'mix',
          exceptWhenMix: 'w',
        })
      ).outputs[2],
    ).toEqual([{ id: 1, v: 'a', w: 2 }]);
  });

  it('fails the node when no field pair is given, or (before v2.2) a field is in no item', async () => {
    expect((await compare([{ id: 1 }], [{ id: 1 }], {})).error?.message).toBe(
      'You need to define at least one pair of fields in "Fields to Match" to match on',
    );
    expect((await compare([{ id: 1 }], [{ key: 1 }], byId, 2.1)).error?.message).toBe(
      "Field 'id' is not present in any of items in 'Input B'",
    );
    // v2.2+ ("do not error on missing keys"): the item is simply unmatched.
    expect((await compare([{ id: 1 }], [{ key: 1 }], byId)).error).toBeNull();
  });
});
