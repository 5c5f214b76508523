import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { getField } from '../merge/json.js';
import { findMatches, type PairToMatch } from './compare.js';

const CompareDatasetsParameters = Type.Object(
  {
    mergeByFields: Type.Object(
      {
        values: Type.Optional(
          Type.Array(
            Type.Object(
              { field1: Type.String({ default: '' }), field2: Type.String({ default: '' }) },
              { additionalProperties: false },
            ),
          ),
        ),
      },
      { additionalProperties: false, default: { values: [{ field1: '', field2: '' }] } },
    ),
    /** v1 defaults to Input B's version, v2+ to both versions (set in execute: it depends on the version). */
    resolve: Type.Optional(Type.Enum(['preferInput1', 'preferInput2', 'mix', 'includeBoth'] as const)),
    fuzzyCompare: Type.Optional(Type.Boolean()),
    preferWhenMix: Type.Enum(['input1', 'input2'] as const, { default: 'input1' }),
    exceptWhenMix: Type.Union([Type.String(), Type.Array(Type.String())], { default: '' }),
    options: Type.Object(
      {
        skipFields: Type.Optional(Type.String()),
        fuzzyCompare: Type.Optional(Type.Boolean()),
        disableDotNotation: Type.Optional(Type.Boolean()),
        multipleMatches: Type.Optional(Type.Enum(['first', 'all'] as const)),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's checks: both fields of every pair named, each in some item of its input (empty items dropped). */
function checkPairs(pairs: PairToMatch[]): PairToMatch[] {
  if (pairs.length === 0 || (pairs.length === 1 && pairs[0]?.field1 === '' && pairs[0]?.field2 === ''))
    throw new NodeOperationError(
      'You need to define at least one pair of fields in "Fields to Match" to match on',
    );
  pairs.forEach((pair, i) => {
    if (pair.field1 === '' || pair.field2 === '')
      throw new NodeOperationError(
        `You need to define both fields in "Fields to Match" for pair ${i + 1}, field 1 = '${pair.field1}' field 2 = '${pair.field2}'`,
      );
  });
  return pairs;
}

/** Empty items dropped; before v2.2 a match field no item has fails the node (v2.2+ leaves it unmatched). */
function checkInput(input: Item[], fields: string[], dot: boolean, label: string, strict: boolean): Item[] {
  const items = input.filter((i) => Object.keys(i.json).length > 0);
  if (items.length === 0 || !strict) return items;
  for (const field of fields) {
    const present = items.some((i) =>
      dot ? getField(i.json, field) !== undefined : Object.hasOwn(i.json, field),
    );
    if (!present)
      throw new NodeOperationError(`Field '${field}' is not present in any of items in '${label}'`);
  }
  return items;
}

/**
 * n8n's Compare Datasets (v1–v2.3): matches items of input A and B on field pairs and sends each to
 * "in A only", "same", "different" (resolved as chosen) or "in B only".
 */
export const compareDatasetsNode = defineNode({
  type: 'n8n-nodes-base.compareDatasets',
  versions: [1, 2, 2.1, 2.2, 2.3],
  // n8n's Compare Datasets throws; under continueOnFail its engine passes input A through.
  passInputOnFail: true,
  schema: CompareDatasetsParameters,
  inputs: 2,
  outputs: () => 4,
  async execute(ctx) {
    const p = await ctx.params(0);
    const version = ctx.node.typeVersion ?? 1;
    const pairs = checkPairs(p.mergeByFields.values ?? []);
    const dot = p.options.disableDotNotation !== true;
    const input1 = checkInput(
      ctx.inputs[0] ?? [],
      pairs.map((x) => x.field1),
      dot,
      'Input A',
      version < 2.2,
    );
    const input2 = checkInput(
      ctx.inputs[1] ?? [],
      pairs.map((x) => x.field2),
      dot,
      'Input B',
      version < 2.2,
    );
    const outputs = findMatches(input1, input2, pairs, {
      ...p.options,
      fuzzyCompare: p.options.fuzzyCompare ?? p.fuzzyCompare,
      resolve: p.resolve ?? (version >= 2 ? 'includeBoth' : 'preferInput2'),
      preferWhenMix: p.preferWhenMix,
      exceptWhenMix: p.exceptWhenMix,
      version,
    });
    return output(...outputs);
  },
});
