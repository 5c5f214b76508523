import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
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

  it("sorts with type 'code' by n8n's default comparator body, in the sandbox", async () => {
    // n8n's default code: it assigns an undeclared `fieldName`, as its editor suggests.
    const code = [
      "fieldName = 'n';",
      'if (a.json[fieldName] < b.json[fieldName]) {',
      'return -1;',
      '}',
      'if (a.json[fieldName] > b.json[fieldName]) {',
      'return 1;',
      '}',
      'return 0;',
    ].join('\n');
    const { json } = await run({ type: 'code', code }, items);
    expect(json.map((j) => j.n)).toEqual(['B', 'a', 'b', 'c']);
    const numeric = await run(
      { type: 'code', code: 'return (b.json.a?.v ?? 0) - (a.json.a?.v ?? 0);' },
      items,
    );
    expect(numeric.json.map((j) => j.n)).toEqual(['a', 'b', 'B', 'c']);
  });

  it('refuses a comparator without a return at save, as n8n does, and fails on one that throws', async () => {
    expect(engine.validate(def({ type: 'code', code: 'a.json.n < b.json.n' }))).toEqual([
      {
        path: 'nodes[1].parameters.code',
        message: "Sort code doesn't return. Please add a 'return' statement to your code",
      },
    ]);
    const { out } = await run({ type: 'code', code: 'throw new Error("no order"); return 0;' }, items);
    expect(out.state.error?.message).toContain('no order');
  });
});
