import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function run(parameters: Record<string, unknown>, items: Item[], typeVersion = 1) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'R', type: 'n8n-nodes-base.removeDuplicates', typeVersion, parameters },
    ],
    [['T', 'R']],
  );
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out, json: jsonOf(out.state, 'R') };
}

describe('n8n-nodes-base.removeDuplicates v1, v1.1', () => {
  it('compares all fields, nested ones included, whatever their key order', async () => {
    const items = [
      { json: { a: { x: 1, y: 2 }, b: 1 } },
      { json: { b: 1, a: { y: 2, x: 1 } } },
      { json: { a: { x: 1, y: 3 }, b: 1 } },
    ];
    expect((await run({}, items)).json).toEqual([items[0]?.json, items[2]?.json]);
  });

  it('compares selected nested fields and keeps only them when asked', async () => {
    const items = [{ json: { u: { id: 1 }, n: 'a' } }, { json: { u: { id: 1 }, n: 'b' } }];
    const { json } = await run(
      { compare: 'selectedFields', fieldsToCompare: 'u.id', options: { removeOtherFields: true } },
      items,
    );
    expect(json).toEqual([{ u: { id: 1 } }]);
  });

  it('fails when a compared field is missing or changes type (v1.1 allows null)', async () => {
    const missing = await run({ compare: 'selectedFields', fieldsToCompare: 'id' }, [
      { json: { id: 1 } },
      { json: {} },
    ]);
    expect(missing.out.state.error?.message).toBe("'id' field is missing from some input items");
    const mixed = [{ json: { id: 1 } }, { json: { id: '1' } }, { json: { id: null } }];
    const typed = await run({ compare: 'selectedFields', fieldsToCompare: 'id' }, mixed);
    expect(typed.out.state.error?.message).toBe("'id' isn't always the same type");
    const withNull = await run(
      { compare: 'selectedFields', fieldsToCompare: 'id' },
      [mixed[0], mixed[2]] as Item[],
      1.1,
    );
    expect(withNull.json).toEqual([{ id: 1 }, { id: null }]);
  });
});
