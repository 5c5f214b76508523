import { Type } from 'typebox';
import { defineNode, output } from '../engine/node-type.js';
import type { Item, Json } from '../engine/types.js';

export const SetParameters = Type.Object({
  /** Field name (dot path, e.g. `customer.email`) → value; values may be expressions. */
  values: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  /** Output only the assigned fields instead of the input item plus them. */
  keepOnlySet: Type.Boolean({ default: false }),
});

/** Assigns fields on each item (values resolved per item). */
export const setNode = defineNode({
  type: 'set',
  schema: SetParameters,
  async execute(ctx) {
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    const out: Item[] = [];
    for (let i = 0; i < items.length; i++) {
      const params = await ctx.params(i);
      const json: Record<string, Json> = params.keepOnlySet ? {} : structuredClone(items[i]?.json ?? {});
      for (const [path, value] of Object.entries(params.values)) setPath(json, path, (value ?? null) as Json);
      out.push({ json });
    }
    return output(out);
  },
});

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Sets `a.b.c` in `target`, creating objects on the way; refuses prototype keys. */
export function setPath(target: Record<string, Json>, path: string, value: Json): void {
  const keys = path.split('.');
  let cur: Record<string, Json> = target;
  keys.forEach((key, i) => {
    if (FORBIDDEN.has(key)) throw new Error(`Field name '${path}' is not allowed`);
    if (i === keys.length - 1) {
      cur[key] = value;
      return;
    }
    const next = cur[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as Record<string, Json>;
  });
}
