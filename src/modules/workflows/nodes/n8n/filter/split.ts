import { Type } from 'typebox';
import type { NodeExecutionContext } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { evaluateFilter, FilterValue, type FilterValueT } from './conditions.js';

/**
 * The parameters IF v2 and Filter v2 share. From 2.1 "Less Strict Type Validation" moved from
 * `options` to the top level, so each range has its own shape (an option of the other is refused).
 */
export function conditionParameters(looseAtTopLevel: boolean) {
  return looseAtTopLevel ? TopLevelLoose : OptionLoose;
}

const OptionLoose = Type.Object(
  {
    conditions: FilterValue,
    options: Type.Object(
      {
        ignoreCase: Type.Optional(Type.Boolean()),
        // IF v2's first option, before n8n named it ignoreCase (its exports still import in n8n).
        caseSensitive: Type.Optional(Type.Boolean()),
        looseTypeValidation: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

const TopLevelLoose = Type.Object(
  {
    conditions: FilterValue,
    looseTypeValidation: Type.Boolean({ default: false }),
    options: Type.Object(
      { ignoreCase: Type.Optional(Type.Boolean()), caseSensitive: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** Both shapes, as execute reads them. */
interface ConditionParameters {
  conditions: FilterValueT;
  looseTypeValidation?: boolean;
  options: { ignoreCase?: boolean; caseSensitive?: boolean; looseTypeValidation?: boolean };
}

/**
 * Splits the input into items whose conditions hold and the rest. With continueOnFail an item whose
 * conditions cannot be evaluated goes to the second output, as in n8n.
 */
export async function splitByConditions(ctx: NodeExecutionContext<unknown>): Promise<[Item[], Item[]]> {
  const pass: Item[] = [];
  const fail: Item[] = [];
  for (const [i, item] of ctx.items.entries()) {
    try {
      const p = (await ctx.params(i)) as ConditionParameters;
      const loose = p.looseTypeValidation ?? p.options.looseTypeValidation;
      const ignoreCase =
        p.options.ignoreCase ??
        (p.options.caseSensitive === undefined ? undefined : !p.options.caseSensitive);
      const fallback = { ignoreCase, looseTypeValidation: loose };
      ((await evaluateFilter(p.conditions, i, fallback)) ? pass : fail).push(item);
    } catch (err) {
      if (ctx.node.continueOnFail !== true) throw err;
      fail.push(item);
    }
  }
  return [pass, fail];
}
