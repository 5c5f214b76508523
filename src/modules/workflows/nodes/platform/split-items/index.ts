import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';

const SplitItemsParameters = Type.Object({
  /** Dot path of the array to split, e.g. `body.lines`. */
  field: Type.String({ minLength: 1 }),
  /** Put each element under this field; by default an object element becomes the item, others go to `value`. */
  destinationField: Type.Optional(Type.String({ minLength: 1 })),
  /** Keep the input item's other fields on each new item. */
  includeOtherFields: Type.Boolean({ default: false }),
});

export function getPath(json: Json | undefined, path: string): Json | undefined {
  let cur: Json | undefined = json;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, key))
      return undefined;
    cur = cur[key];
  }
  return cur;
}

/** One item per element of an array field. */
export const splitItemsNode = defineNode({
  type: 'n8n-nodes-platform.splitItems',
  schema: SplitItemsParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const json = (ctx.items[i] as Item).json;
      const value = getPath(json, p.field);
      if (value === undefined || value === null) continue;
      const elements = Array.isArray(value) ? value : [value];
      const rest: Record<string, Json> = {};
      if (p.includeOtherFields) {
        const top = p.field.split('.')[0] as string;
        for (const [k, v] of Object.entries(json)) if (k !== top) rest[k] = v;
      }
      for (const el of elements) {
        const own: Record<string, Json> =
          p.destinationField !== undefined
            ? { [p.destinationField]: el }
            : el !== null && typeof el === 'object' && !Array.isArray(el)
              ? el
              : { value: el };
        out.push({ json: { ...rest, ...own } });
      }
    }
    return output(out);
  },
});
