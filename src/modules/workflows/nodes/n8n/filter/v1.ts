import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { LegacyConditions, legacyConditionsHold } from '../if/legacy-compare.js';

const FilterV1Parameters = Type.Object(
  {
    conditions: LegacyConditions,
    combineConditions: Type.Enum(['AND', 'OR'] as const, { default: 'AND' }),
  },
  { additionalProperties: false },
);

/** n8n's Filter v1: IF v1's typed conditions, combined by `AND`/`OR`; only the kept items go on. */
export const filterV1Node = defineNode({
  type: 'n8n-nodes-base.filter',
  versions: [1],
  schema: FilterV1Parameters,
  async execute(ctx) {
    const kept: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      if (await legacyConditionsHold(p.conditions, p.combineConditions === 'OR')) kept.push(item);
    }
    return output(kept);
  },
});
