import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { Combine, Condition, matches } from '../conditions.js';

const IfParameters = Type.Object({
  conditions: Type.Array(Condition, { minItems: 1 }),
  combine: Combine,
});

/** Routes each item to output 0 (conditions hold) or output 1 (they do not). */
export const ifNode = defineNode({
  type: 'n8n-nodes-platform.if',
  schema: IfParameters,
  outputs: () => 2,
  async execute(ctx) {
    const yes: Item[] = [];
    const no: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const item = ctx.items[i] as Item;
      (matches(p.conditions, p.combine) ? yes : no).push(item);
    }
    return output(yes, no);
  },
});
