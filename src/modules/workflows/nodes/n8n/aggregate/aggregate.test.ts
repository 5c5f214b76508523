import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function run(parameters: Record<string, unknown>, items: Item[]) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'A', type: 'n8n-nodes-base.aggregate', typeVersion: 1, parameters },
    ],
    [['T', 'A']],
  );
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out, json: jsonOf(out.state, 'A') };
}

const rows: Item[] = [
  { json: { user: { name: 'Ada' }, tags: ['a', null], team: 'x' } },
  { json: { user: { name: 'Bob' }, tags: ['b'], team: 'y' } },
  { json: { user: {}, tags: null, team: 'x' } },
];

describe('n8n-nodes-base.aggregate v1', () => {
  it('aggregates individual fields, skipping missing and null values unless asked', async () => {
    const fields = {
      fieldToAggregate: [
        { fieldToAggregate: 'user.name' },
        { fieldToAggregate: 'tags', renameField: true, outputFieldName: 'allTags' },
      ],
    };
    expect((await run({ fieldsToAggregate: fields }, rows)).json).toEqual([
      { name: ['Ada', 'Bob'], allTags: [['a'], ['b']] },
    ]);
    expect(
      (await run({ fieldsToAggregate: fields, options: { mergeLists: true, keepMissing: true } }, rows)).json,
    ).toEqual([{ name: ['Ada', 'Bob', null], allTags: ['a', null, 'b', null] }]);
  });

  it('puts all item data in one list, with only or without some fields', async () => {
    const { json } = await run(
      {
        aggregate: 'aggregateAllItemData',
        destinationFieldName: 'teams',
        include: 'specifiedFields',
        fieldsToInclude: 'team',
      },
      rows,
    );
    expect(json).toEqual([{ teams: [{ team: 'x' }, { team: 'y' }, { team: 'x' }] }]);
  });

  it('groups by a field', async () => {
    const { json } = await run(
      {
        fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'user.name' }] },
        options: { groupByFields: 'team' },
      },
      rows,
    );
    expect(json).toEqual([
      { team: 'x', name: ['Ada'] },
      { team: 'y', name: ['Bob'] },
    ]);
  });

  it('refuses an output field used twice, with n8n words', async () => {
    const { out } = await run(
      {
        fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'team' }, { fieldToAggregate: 'team' }] },
      },
      rows,
    );
    expect(out.state.error?.message).toBe("The 'team' output field is used more than once");
  });

  it('refuses binaries and unknown options at save time', () => {
    const def = workflow(
      [
        {
          name: 'A',
          type: 'n8n-nodes-base.aggregate',
          typeVersion: 1,
          parameters: { options: { includeBinaries: true, x: 1 } },
        },
      ],
      [],
    );
    const paths = engine.validate(def).map((p) => p.path);
    expect(paths).toContain('nodes[0].parameters.options.includeBinaries');
    expect(paths).toContain('nodes[0].parameters.options.x');
  });
});
