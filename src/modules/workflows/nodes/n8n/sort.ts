import { randomInt } from 'node:crypto';
import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../engine/node-type.js';
import type { Json } from '../../engine/types.js';
import { getField, isDeepEqual, lessThan } from './merge-json.js';

const SortField = Type.Object(
  {
    fieldName: Type.String({ default: '' }),
    order: Type.Union([Type.Literal('ascending'), Type.Literal('descending')], { default: 'ascending' }),
  },
  { additionalProperties: false },
);

export const SortParameters = Type.Object(
  {
    type: Type.Union([Type.Literal('simple'), Type.Literal('random'), Type.Literal('code')], {
      default: 'simple',
    }),
    sortFieldsUi: Type.Object(
      { sortField: Type.Optional(Type.Array(SortField)) },
      { additionalProperties: false, default: {} },
    ),
    /** Type `code`: a JavaScript comparator; refused until the Code sandbox exists. */
    code: Type.Optional(Type.String()),
    options: Type.Object(
      { disableDotNotation: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's Sort: by fields (strings case-insensitively), or shuffled. */
export const sortNode = defineNode({
  type: 'n8n-nodes-base.sort',
  versions: [1],
  schema: SortParameters,
  check(p) {
    return p.type === 'code'
      ? [
          {
            path: 'parameters.type',
            message:
              "type 'code' runs a JavaScript comparator, which needs the Code node's sandbox (not available yet)",
          },
        ]
      : [];
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    const items = [...ctx.items];
    if (p.type === 'random') {
      for (let i = items.length - 1; i > 0; i--) {
        const j = randomInt(i + 1);
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      return output(items);
    }
    if (p.type === 'code') throw new NodeOperationError("Sort type 'code' needs the Code node's sandbox");
    const dot = p.options.disableDotNotation !== true;
    const fields = p.sortFieldsUi.sortField ?? [];
    if (fields.length === 0)
      throw new NodeOperationError('No sorting specified. Please add a field to sort by');
    for (const { fieldName } of fields) {
      if (items.some((i) => getField(i.json, fieldName, dot) !== undefined)) continue;
      throw new NodeOperationError(
        `Couldn't find the field '${fieldName}' in the input data`,
        !dot && fieldName.includes('.')
          ? {
              description:
                "If you're trying to use a nested field, make sure you turn off 'disable dot notation' in the node options",
            }
          : {},
      );
    }
    const key = (v: Json | undefined) => (typeof v === 'string' ? v.toLowerCase() : v);
    items.sort((a, b) => {
      for (const { fieldName, order } of fields) {
        const x = key(getField(a.json, fieldName, dot));
        const y = key(getField(b.json, fieldName, dot));
        if (isDeepEqual(x, y)) continue;
        const dir = order === 'ascending' ? 1 : -1;
        return lessThan(x, y) ? -dir : dir;
      }
      return 0;
    });
    return output(items);
  },
});
