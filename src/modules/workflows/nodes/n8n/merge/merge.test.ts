import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Json } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const split = (field: string) => ({
  name: `in_${field}`,
  type: 'n8n-nodes-base.splitOut',
  typeVersion: 1,
  parameters: { fieldToSplitOut: field },
});

/** trigger → split out `a`, `b`, `c` … → Merge inputs 0, 1, 2 … */
function mergeOf(parameters: Record<string, unknown>, inputs: Record<string, Json[]>, version = 3) {
  const fields = Object.keys(inputs);
  return workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      ...fields.map(split),
      { name: 'M', type: 'n8n-nodes-base.merge', typeVersion: version, parameters },
    ],
    fields.flatMap(
      (f, i): Array<[string, string, number?, number?]> => [
        ['T', `in_${f}`],
        [`in_${f}`, 'M', 0, i],
      ],
    ),
  );
}

async function run(parameters: Record<string, unknown>, inputs: Record<string, Json[]>, version = 3) {
  const def = mergeOf(parameters, inputs, version);
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'T', items: [{ json: inputs }] }, ctx);
  return { out, json: jsonOf(out.state, 'M') };
}

const people = [
  { id: 1, name: 'Ada' },
  { id: 2, name: 'Bob' },
  { id: 3, name: 'Cy' },
];
const orders = [
  { id: 1, total: 10 },
  { id: '2', total: 20 },
  { id: 1, total: 30 },
  { id: 9, total: 90 },
];

describe('n8n-nodes-base.merge v3', () => {
  it('appends any number of inputs in input order', async () => {
    const { json } = await run(
      { numberInputs: 3 },
      { a: [{ x: 1 }], b: [{ x: 2 }, { x: 3 }], c: [{ x: 4 }] },
    );
    expect(json).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }]);
  });

  it('refuses a connection to an input beyond numberInputs', () => {
    const def = mergeOf({}, { a: [], b: [], c: [] });
    expect(engine.validate(def).map((p) => p.message)).toEqual(['input index must be below 2']);
  });

  it('keeps matches, one item per pair, input 2 winning clashes by default', async () => {
    const { json } = await run(
      { mode: 'combine', fieldsToMatchString: 'id', options: {} },
      { a: people, b: orders },
    );
    expect(json).toEqual([
      { id: 1, name: 'Ada', total: 10 },
      { id: 1, name: 'Ada', total: 30 },
    ]);
  });

  it('fuzzy compare matches a number with its text; first match only', async () => {
    const { json } = await run(
      {
        mode: 'combine',
        fieldsToMatchString: 'id',
        options: { fuzzyCompare: true, multipleMatches: 'first' },
      },
      { a: people, b: orders },
    );
    expect(json).toEqual([
      { id: 1, name: 'Ada', total: 10 },
      { id: '2', name: 'Bob', total: 20 },
    ]);
  });

  it('enriches input 1 with suffixed fields and keeps its unmatched items', async () => {
    const { json } = await run(
      {
        mode: 'combine',
        advanced: true,
        mergeByFields: { values: [{ field1: 'id', field2: 'id' }] },
        joinMode: 'enrichInput1',
        options: { clashHandling: { values: { resolveClash: 'addSuffix' } }, multipleMatches: 'first' },
      },
      { a: people, b: orders },
    );
    expect(json).toEqual([
      { id_1: 1, name_1: 'Ada', id_2: 1, total_2: 10 },
      { id_1: 2, name_1: 'Bob' },
      { id_1: 3, name_1: 'Cy' },
    ]);
  });

  it('keeps non-matches of both inputs, marked with their source', async () => {
    const { json } = await run(
      { mode: 'combine', fieldsToMatchString: 'id', joinMode: 'keepNonMatches' },
      { a: people, b: orders },
    );
    expect(json).toEqual([
      { id: 2, name: 'Bob', _source: 'input1' },
      { id: 3, name: 'Cy', _source: 'input1' },
      { id: '2', total: 20, _source: 'input2' },
      { id: 9, total: 90, _source: 'input2' },
    ]);
  });

  it('fails with n8n words when no field to match is given', async () => {
    const { out } = await run({ mode: 'combine' }, { a: people, b: orders });
    expect(out.state.error?.message).toBe(
      'You need to define at least one pair of fields in "Fields to Match" to match on',
    );
  });

  it('combines by position, deep merging and preferring input 1 when asked', async () => {
    const { json } = await run(
      {
        mode: 'combine',
        combineBy: 'combineByPosition',
        options: { clashHandling: { values: { resolveClash: 'preferInput1' } }, includeUnpaired: true },
      },
      { a: [{ k: 'a', n: { x: 1 } }], b: [{ k: 'b', n: { y: 2 } }, { k: 'b2' }] },
    );
    expect(json).toEqual([{ k: 'a', n: { x: 1, y: 2 } }, { k: 'b2' }]);
  });

  it('builds every combination (cross join)', async () => {
    const { json } = await run(
      { mode: 'combine', combineBy: 'combineAll', options: {} },
      { a: [{ a: 1 }, { a: 2 }], b: [{ b: 1 }, { b: 2 }] },
    );
    expect(json).toEqual([
      { a: 1, b: 1 },
      { a: 1, b: 2 },
      { a: 2, b: 1 },
      { a: 2, b: 2 },
    ]);
  });

  it('refuses a cross join past both inputs plus 100,000 items, naming the count', async () => {
    const many = (n: number, key: string) => Array.from({ length: n }, (_, i) => ({ [key]: i }));
    const { out } = await run(
      { mode: 'combine', combineBy: 'combineAll', options: {} },
      { a: many(400, 'a'), b: many(400, 'b') },
    );
    expect(out.state.error?.message).toBe(
      'All Possible Combinations would make 160000 items (400 × 400); at most 100800',
    );
    const { json } = await run(
      { mode: 'combine', combineBy: 'combineAll', options: {} },
      { a: many(300, 'a'), b: many(300, 'b') },
    );
    expect(json).toHaveLength(90_000);
  });

  it('chooses a branch: the data of the given input, or one empty item', async () => {
    const inputs = { a: [{ a: 1 }], b: [{ b: 1 }] };
    expect((await run({ mode: 'chooseBranch', useDataOfInput: 2 }, inputs, 3.2)).json).toEqual([{ b: 1 }]);
    expect((await run({ mode: 'chooseBranch', output: 'empty' }, inputs, 3.1)).json).toEqual([{}]);
  });

  it('takes combineBySql (sql.test.ts) and refuses unknown parameters at save time', () => {
    const sql = mergeOf({ mode: 'combineBySql', query: 'SELECT * FROM input1' }, { a: [], b: [] });
    expect(engine.validate(sql)).toEqual([]);
    const unknown = mergeOf({ mode: 'append', options: { sortBy: 'id' } }, { a: [], b: [] });
    expect(engine.validate(unknown).map((p) => p.path)).toContain('nodes[3].parameters.options.sortBy');
  });

  it('reports an unknown version with the supported ones', () => {
    const def = mergeOf({}, { a: [], b: [] }, 9);
    expect(engine.validate(def)[0]?.message).toMatch(
      /has no version 9 here \(supported: 1, 2, 2.1, 3, 3.1, 3.2\)/,
    );
  });

  it('runs v2 parameters as v3 does: combine by fields, multiplex, choose branch', async () => {
    const inputs = {
      a: [
        { id: 1, x: 'a' },
        { id: 2, x: 'b' },
      ],
      b: [{ id: 2, y: 'B' }],
    };
    const byFields = await run(
      {
        mode: 'combine',
        combinationMode: 'mergeByFields',
        mergeByFields: { values: [{ field1: 'id', field2: 'id' }] },
      },
      inputs,
      2.1,
    );
    expect(byFields.json).toEqual([{ id: 2, x: 'b', y: 'B' }]);
    expect((await run({ mode: 'combine', combinationMode: 'multiplex' }, inputs, 2)).json).toHaveLength(2);
    expect((await run({ mode: 'chooseBranch', output: 'input2' }, inputs, 2.1)).json).toEqual([
      { id: 2, y: 'B' },
    ]);
    expect(
      engine.validate(mergeOf({ mode: 'combine', combinationMode: 'combineByFields' }, inputs, 2)),
    ).not.toEqual([]);
  });
});
