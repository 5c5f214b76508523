import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { Combine, Condition, matches } from '../conditions.js';

const SwitchParameters = Type.Object({
  /** Rule i sends matching items to output i. */
  rules: Type.Array(Type.Object({ conditions: Type.Array(Condition, { minItems: 1 }), combine: Combine }), {
    minItems: 1,
  }),
  /** `extra`: items no rule matches go to one more output (after the rules'); `none`: they are dropped. */
  fallbackOutput: Type.Enum(['none', 'extra'] as const, { default: 'none' }),
  /** Send an item to every matching rule instead of the first. */
  allMatchingOutputs: Type.Boolean({ default: false }),
});

const ruleCount = (params: Record<string, unknown>) =>
  Array.isArray(params.rules) ? params.rules.length : 0;

/** Routes each item by the first (or every) rule it matches. */
export const switchNode = defineNode({
  type: 'n8n-nodes-platform.switch',
  schema: SwitchParameters,
  outputs: (params) => ruleCount(params) + (params.fallbackOutput === 'extra' ? 1 : 0),
  async execute(ctx) {
    const first = await ctx.params(0);
    const outputs: Item[][] = Array.from(
      { length: first.rules.length + (first.fallbackOutput === 'extra' ? 1 : 0) },
      () => [],
    );
    for (let i = 0; i < ctx.items.length; i++) {
      const p = i === 0 ? first : await ctx.params(i);
      const item = ctx.items[i] as Item;
      let matched = false;
      for (const [r, rule] of p.rules.entries()) {
        if (!matches(rule.conditions, rule.combine)) continue;
        outputs[r]?.push(item);
        matched = true;
        if (!p.allMatchingOutputs) break;
      }
      if (!matched && p.fallbackOutput === 'extra') outputs[p.rules.length]?.push(item);
    }
    return output(...outputs);
  },
});
