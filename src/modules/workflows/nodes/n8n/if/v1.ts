import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { LegacyConditions, legacyConditionsHold } from './legacy-compare.js';

const IfV1Parameters = Type.Object(
  {
    conditions: LegacyConditions,
    combineOperation: Type.Enum(['all', 'any'] as const, { default: 'all' }),
  },
  { additionalProperties: false },
);

/**
 * n8n's IF v1: typed value-1/operation/value-2 conditions (boolean, dateTime, number, string) combined
 * by `all` or `any`; items that pass leave on output 0 ("true"), the rest on output 1 ("false").
 */
export const ifV1Node = defineNode({
  type: 'n8n-nodes-base.if',
  versions: [1],
  schema: IfV1Parameters,
  outputs: () => 2,
  async execute(ctx) {
    const yes: Item[] = [];
    const no: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      ((await legacyConditionsHold(p.conditions, p.combineOperation === 'any')) ? yes : no).push(item);
    }
    return output(yes, no);
  },
});
