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

  it('refuses unknown options at save time', () => {
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
    expect(paths).not.toContain('nodes[0].parameters.options.includeBinaries');
    expect(paths).toContain('nodes[0].parameters.options.x');
  });

  it('includeBinaries: every file on the one item, a taken key suffixed; keepOnlyUnique leaves out look-alikes', async () => {
    const file = (data: string, mimeType = 'image/png') => ({
      data: Buffer.from(data).toString('base64'),
      mimeType,
      fileExtension: mimeType === 'image/png' ? 'png' : 'pdf',
      fileSize: `${data.length} B`,
    });
    const items: Item[] = [
      { json: { n: 1 }, binary: { data: file('aaa') } },
      { json: { n: 2 }, binary: { data: file('bbb'), doc: file('ccccc', 'application/pdf') } },
      { json: { n: 3 } },
      { json: { n: 4 }, binary: { data: file('ddd') } },
    ];
    const fields = { fieldToAggregate: [{ fieldToAggregate: 'n' }] };
    const all = await run({ fieldsToAggregate: fields, options: { includeBinaries: true } }, items);
    const [item] = all.out.state.runData.A?.[0]?.output[0] ?? [];
    expect(item?.json).toEqual({ n: [1, 2, 3, 4] });
    expect(Object.keys(item?.binary ?? {})).toEqual(['data', 'data_1', 'doc', 'data_2']);
    expect(Buffer.from(item?.binary?.data_2?.data ?? '', 'base64').toString()).toBe('ddd');

    const unique = await run(
      { fieldsToAggregate: fields, options: { includeBinaries: true, keepOnlyUnique: true } },
      items,
    );
    const [one] = unique.out.state.runData.A?.[0]?.output[0] ?? [];
    expect(Object.keys(one?.binary ?? {})).toEqual(['data', 'doc']);

    // Grouped: each group's own files.
    const grouped = await run(
      { fieldsToAggregate: fields, options: { includeBinaries: true, groupByFields: 'team' } },
      items.map((i, k) => ({ ...i, json: { ...i.json, team: k % 2 === 0 ? 'x' : 'y' } })),
    );
    const groups = grouped.out.state.runData.A?.[0]?.output[0] ?? [];
    expect(groups.map((g) => Object.keys(g.binary ?? {}))).toEqual([['data'], ['data', 'doc', 'data_1']]);
  });
});
