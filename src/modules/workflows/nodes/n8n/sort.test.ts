import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../engine/testing.js';
import type { Item } from '../../engine/types.js';
import { WorkflowEngine } from '../../engine/workflow-engine.js';

const engine = new WorkflowEngine(testDeps());
const def = (parameters: Record<string, unknown>) =>
  workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'S', type: 'n8n-nodes-base.sort', typeVersion: 1, parameters },
    ],
    [['T', 'S']],
  );

async function run(parameters: Record<string, unknown>, items: Item[]) {
  const out = await engine.run(def(parameters), { nodeName: 'T', items }, ctx);
  return { out, json: jsonOf(out.state, 'S') };
}

const items: Item[] = [
  { json: { n: 'b', a: { v: 2 } } },
  { json: { n: 'B', a: { v: 1 } } },
  { json: { n: 'a', a: { v: 3 } } },
  { json: { n: 'c' } },
];

describe('n8n-nodes-base.sort v1', () => {
  it('sorts by several fields, strings case-insensitively, keeping ties in order', async () => {
    const { json } = await run(
      { sortFieldsUi: { sortField: [{ fieldName: 'n' }, { fieldName: 'a.v', order: 'descending' }] } },
      items,
    );
    expect(json).toEqual([
      { n: 'a', a: { v: 3 } },
      { n: 'b', a: { v: 2 } },
      { n: 'B', a: { v: 1 } },
      { n: 'c' },
    ]);
  });

  it('shuffles with type random, keeping every item', async () => {
    const { json } = await run({ type: 'random' }, items);
    expect(json).toHaveLength(4);
    expect(json).toEqual(expect.arrayContaining(items.map((i) => i.json)));
  });

  it('fails with n8n words for a field no item has', async () => {
    const { out } = await run({ sortFieldsUi: { sortField: [{ fieldName: 'zzz' }] } }, items);
    expect(out.state.error?.message).toBe("Couldn't find the field 'zzz' in the input data");
  });

  it("refuses type 'code' at save time: it needs the Code sandbox", () => {
    expect(engine.validate(def({ type: 'code', code: 'return 0;' }))).toEqual([
      { path: 'nodes[1].parameters.type', message: expect.stringContaining('Code') },
    ]);
  });
});
