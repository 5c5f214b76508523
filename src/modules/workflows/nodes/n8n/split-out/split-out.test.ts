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
      { name: 'S', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters },
    ],
    [['T', 'S']],
  );
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out, json: jsonOf(out.state, 'S') };
}

const order = { json: { id: 7, lines: [{ sku: 'a' }, { sku: 'b' }], tags: ['x', 'y'], meta: { k: 1 } } };

describe('n8n-nodes-base.splitOut v1', () => {
  it('makes one item per element; object elements become the item', async () => {
    expect((await run({ fieldToSplitOut: 'lines' }, [order])).json).toEqual([{ sku: 'a' }, { sku: 'b' }]);
  });

  it('splits several fields side by side into named destinations, keeping selected fields', async () => {
    const { json } = await run(
      {
        fieldToSplitOut: 'lines, $json.tags',
        include: 'selectedOtherFields',
        fieldsToInclude: 'id',
        options: { destinationFieldName: 'line, tag' },
      },
      [order],
    );
    expect(json).toEqual([
      { line: { sku: 'a' }, tag: 'x', id: 7 },
      { line: { sku: 'b' }, tag: 'y', id: 7 },
    ]);
  });

  it('keeps all other fields and reads nested paths unless dot notation is off', async () => {
    const nested = [{ json: { a: { list: [1, 2] }, keep: true } }];
    expect((await run({ fieldToSplitOut: 'a.list', include: 'allOtherFields' }, nested)).json).toEqual([
      { 'a.list': 1, a: {}, keep: true },
      { 'a.list': 2, a: {}, keep: true },
    ]);
    const items = [{ json: { a: { list: [1, 2] }, 'a.list': [9] } }];
    const flat = await run({ fieldToSplitOut: 'a.list', options: { disableDotNotation: true } }, items);
    expect(flat.json).toEqual([{ 'a.list': 9 }]);
  });

  it('splits an object field into its values and a scalar into one item', async () => {
    expect((await run({ fieldToSplitOut: 'meta' }, [order])).json).toEqual([{ meta: 1 }]);
    expect((await run({ fieldToSplitOut: 'id' }, [order])).json).toEqual([{ id: 7 }]);
  });

  it('refuses a prototype key as destination, and a mismatched number of destinations', async () => {
    const proto = await run({ fieldToSplitOut: 'tags', options: { destinationFieldName: '__proto__.x' } }, [
      order,
    ]);
    expect(proto.out.state.error?.message).toBe('Invalid destination field name');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    const count = await run({ fieldToSplitOut: 'tags', options: { destinationFieldName: 'a, b' } }, [order]);
    expect(count.out.state.error?.message).toMatch(/same number of destination fields/);
  });

  it('includeBinary: each split item carries its input item’s files', async () => {
    const binary = { data: { data: Buffer.from('pdf').toString('base64'), mimeType: 'application/pdf' } };
    const withFiles = await run({ fieldToSplitOut: 'tags', options: { includeBinary: true } }, [
      { ...order, binary },
    ]);
    const items = withFiles.out.state.runData.S?.[0]?.output[0] ?? [];
    expect(items.length).toBeGreaterThan(1);
    expect(items.every((i) => i.binary?.data?.mimeType === 'application/pdf')).toBe(true);
    const without = await run({ fieldToSplitOut: 'tags' }, [{ ...order, binary }]);
    expect((without.out.state.runData.S?.[0]?.output[0] ?? []).every((i) => i.binary === undefined)).toBe(
      true,
    );
  });

  it('$binary: one item per binary property, carrying that file (as n8n splits a multi-file upload)', async () => {
    const file = (text: string, mimeType: string) => ({
      data: Buffer.from(text).toString('base64'),
      mimeType,
      fileName: `${text}.bin`,
    });
    const binary = { data0: file('a', 'image/png'), data1: file('b', 'application/pdf') };
    const { out, json } = await run({ fieldToSplitOut: '$binary' }, [{ json: { id: 1 }, binary }]);
    const items = out.state.runData.S?.[0]?.output[0] ?? [];
    expect(json).toEqual([{}, {}]);
    expect(items.map((i) => i.binary)).toEqual([{ data0: binary.data0 }, { data1: binary.data1 }]);
    // With the other fields; includeBinary does not add the others' files to an item that has its own.
    const all = await run(
      { fieldToSplitOut: '$binary', include: 'allOtherFields', options: { includeBinary: true } },
      [{ json: { id: 1 }, binary }],
    );
    expect(jsonOf(all.out.state, 'S')).toEqual([{ id: 1 }, { id: 1 }]);
    expect((all.out.state.runData.S?.[0]?.output[0] ?? []).map((i) => Object.keys(i.binary ?? {}))).toEqual([
      ['data0'],
      ['data1'],
    ]);
    // An item without files gives no items, as in n8n.
    expect((await run({ fieldToSplitOut: '$binary' }, [{ json: { id: 2 } }])).json).toEqual([]);
  });

  it('refuses unknown parameters at save time', () => {
    const def = (parameters: Record<string, unknown>) =>
      workflow([{ name: 'S', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters }], []);
    expect(engine.validate(def({ fieldToSplitOut: 'a', options: { includeBinary: true } }))).toEqual([]);
    expect(engine.validate(def({ fieldToSplitOut: '$binary' }))).toEqual([]);
    expect(engine.validate(def({ fieldToSplitOut: 'a', fieldToSplit: 'b' })).map((p) => p.path)).toContain(
      'nodes[0].parameters.fieldToSplit',
    );
  });
});
