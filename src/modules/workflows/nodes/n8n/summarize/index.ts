import { type Static, Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { type Aggregation, groupsToItems, missingField, splitData, valueGetter } from './summarize.js';

export const AggregationEntry = Type.Object(
  {
    aggregation: Type.Enum(
      ['append', 'average', 'concatenate', 'count', 'countUnique', 'max', 'min', 'sum'] as const,
      { default: 'count' },
    ),
    field: Type.String({ default: '' }),
    includeEmpty: Type.Optional(Type.Boolean()),
    separateBy: Type.Optional(Type.String()),
    customSeparator: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const SummarizeOptions = Type.Object(
  {
    continueIfFieldNotFound: Type.Optional(Type.Boolean()),
    disableDotNotation: Type.Optional(Type.Boolean()),
    outputFormat: Type.Optional(Type.Enum(['separateItems', 'singleItem'] as const)),
    skipEmptySplitFields: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, default: {} },
);

const SummarizeParameters = Type.Object(
  {
    fieldsToSummarize: Type.Object(
      { values: Type.Optional(Type.Array(AggregationEntry)) },
      { additionalProperties: false, default: { values: [{ aggregation: 'count', field: '' }] } },
    ),
    fieldsToSplitBy: Type.Union([Type.String(), Type.Array(Type.String())], { default: '' }),
    options: SummarizeOptions,
  },
  { additionalProperties: false },
);

export type SummarizeParams = Static<typeof SummarizeParameters>;

/**
 * The Summarize logic over a node's input, shared with Item Lists: the items it outputs. A field no
 * item has fails the node unless `v11` (v1.1, or v1 with "continue if field not found").
 * v1.1 (`v11`) also gives the first split field's values back their type (`0`, `null`), as n8n does.
 */
export function summarizeItems(items: Item[], p: SummarizeParams, v11: boolean): Item[] {
  const aggregations = (p.fieldsToSummarize.values ?? []) as Aggregation[];
  if (aggregations.every((a) => a.field === ''))
    throw new NodeOperationError(
      "You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'",
    );
  const splitBy = (Array.isArray(p.fieldsToSplitBy) ? p.fieldsToSplitBy : p.fieldsToSplitBy.split(','))
    .map((f) => f.trim())
    .filter((f) => f !== '');
  const get = valueGetter(p.options.disableDotNotation);
  const json = items.map((i) => i.json);
  const missing = missingField(json, aggregations, get);
  if (missing !== null && !v11 && p.options.continueIfFieldNotFound !== true)
    throw new NodeOperationError(`The field '${missing}' does not exist in any items`);
  const nested = splitData(splitBy, json, aggregations, p.options, get);
  if (p.options.outputFormat === 'singleItem' || splitBy.length === 0) return [{ json: nested }];
  return groupsToItems(nested, splitBy, v11).map((g) => ({ json: g }));
}

/** n8n's Summarize (v1, v1.1): sum, count, min, max, average, append, concatenate across items. */
export const summarizeNode = defineNode({
  type: 'n8n-nodes-base.summarize',
  versions: [1, 1.1],
  schema: SummarizeParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    return output(summarizeItems(ctx.items, p, (ctx.node.typeVersion ?? 1) > 1));
  },
});
