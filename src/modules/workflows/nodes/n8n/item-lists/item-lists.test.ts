import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const items = [{ json: { id: 2, tag: 'x' } }, { json: { id: 1, tag: 'y' } }, { json: { id: 2, tag: 'x' } }];

async function run(
  type: string,
  typeVersion: number,
  parameters: Record<string, unknown>,
  settings: Record<string, unknown> = {},
) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'N', type, typeVersion, parameters, ...settings },
    ],
    [['T', 'N']],
  );
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out: jsonOf(out.state, 'N'), error: out.state.error };
}

describe('n8n-nodes-base.itemLists', () => {
  it("under continueOnFail a failing run passes its input through, as n8n's engine does", async () => {
    const split = { fieldToSplitOut: 'missing' };
    expect((await run('n8n-nodes-base.itemLists', 2, split)).error?.message).toBe(
      "The field 'missing' wasn't found in any input item",
    );
    const passed = await run('n8n-nodes-base.itemLists', 2, split, { continueOnFail: true });
    expect(passed.error).toBeNull();
    expect(passed.out).toEqual(items.map((i) => i.json));
    const onError = await run('n8n-nodes-base.itemLists', 2, split, { onError: 'continueRegularOutput' });
    expect(onError.out).toEqual(items.map((i) => i.json));
    // The error output still carries the error (only the regular output passes the input on).
    const errorOut = await run('n8n-nodes-base.itemLists', 2, split, { onError: 'continueErrorOutput' });
    expect(errorOut.error).toBeNull();
    // v2.1 no longer refuses it: there is nothing to split.
    expect((await run('n8n-nodes-base.itemLists', 2.1, split)).out).toEqual([]);
  });

  it('runs each operation through the node it became (v3 text fields, v2 field lists)', async () => {
    expect(
      (
        await run('n8n-nodes-base.itemLists', 3.1, {
          operation: 'removeDuplicates',
          compare: 'selectedFields',
          fieldsToCompare: 'id',
        })
      ).out,
    ).toEqual([
      { id: 2, tag: 'x' },
      { id: 1, tag: 'y' },
    ]);
    expect(
      (
        await run('n8n-nodes-base.itemLists', 2, {
          operation: 'removeDuplicates',
          compare: 'allFieldsExcept',
          fieldsToExclude: { fields: [{ fieldName: 'tag' }] },
        })
      ).out,
    ).toHaveLength(2);
    expect(
      (
        await run('n8n-nodes-base.itemLists', 3, {
          operation: 'sort',
          sortFieldsUi: { sortField: [{ fieldName: 'id' }] },
        })
      ).out.map((j) => j.id),
    ).toEqual([1, 2, 2]);
    expect(
      (
        await run('n8n-nodes-base.itemLists', 3, {
          operation: 'concatenateItems',
          fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'tag' }] },
        })
      ).out,
    ).toEqual([{ tag: ['x', 'y', 'x'] }]);
  });

  it("names the operation's bad parameter", async () => {
    expect(
      (await run('n8n-nodes-base.itemLists', 3, { operation: 'limit', maxItems: 0 })).error?.message,
    ).toBe('Invalid parameters: parameters.maxItems must be >= 1');
  });
});
