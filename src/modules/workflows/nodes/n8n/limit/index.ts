import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';

const LimitParameters = Type.Object(
  {
    maxItems: Type.Integer({ minimum: 1, default: 1 }),
    keep: Type.Union([Type.Literal('firstItems'), Type.Literal('lastItems')], { default: 'firstItems' }),
  },
  { additionalProperties: false },
);

/** n8n's Limit: keeps at most `maxItems` items, from the start or the end. */
export const limitNode = defineNode({
  type: 'n8n-nodes-base.limit',
  versions: [1],
  schema: LimitParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    const items = ctx.items;
    if (items.length <= p.maxItems) return output(items);
    return output(p.keep === 'firstItems' ? items.slice(0, p.maxItems) : items.slice(-p.maxItems));
  },
});
