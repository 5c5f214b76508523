import { Type } from 'typebox';
import { assertNever } from '../../../core/errors.js';
import { defineNode, output } from '../engine/node-type.js';
import type { Item } from '../engine/types.js';

export const MergeParameters = Type.Object({
  /** `append`: input 0's items then input 1's; `combineByPosition`: item i of both merged into one. */
  mode: Type.Enum(['append', 'combineByPosition'] as const, { default: 'append' }),
});

/** Joins two inputs; the engine runs it once both connected inputs have arrived. */
export const mergeNode = defineNode({
  type: 'merge',
  schema: MergeParameters,
  inputs: 2,
  async execute(ctx) {
    const p = await ctx.params(0);
    const [a = [], b = []] = ctx.inputs;
    switch (p.mode) {
      case 'append':
        return output([...a, ...b]);
      case 'combineByPosition': {
        const out: Item[] = [];
        for (let i = 0; i < Math.max(a.length, b.length); i++) {
          out.push({ json: { ...(a[i]?.json ?? {}), ...(b[i]?.json ?? {}) } });
        }
        return output(out);
      }
      default:
        return assertNever(p.mode);
    }
  },
});
