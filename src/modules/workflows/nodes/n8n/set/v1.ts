import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { setPath } from './paths.js';

/** One `{name, value}` entry; n8n's defaults fill what an export omits (see `entryValue`). */
const entry = Type.Array(
  Type.Object(
    { name: Type.String({ default: 'propertyName' }), value: Type.Optional(Type.Unknown()) },
    { additionalProperties: false },
  ),
  { default: [] },
);

const VALUE_DEFAULTS = { boolean: false, number: 0, string: '' } as const;
type Kind = keyof typeof VALUE_DEFAULTS;

const SetV1Parameters = Type.Object(
  {
    /** Output only the fields set here instead of the input item plus them. */
    keepOnlySet: Type.Boolean({ default: false }),
    values: Type.Object(
      {
        boolean: entry,
        number: entry,
        string: entry,
      },
      { additionalProperties: false, default: {} },
    ),
    options: Type.Object(
      { dotNotation: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Set v1 and v2: booleans, then numbers, then strings are written, each at a dot path unless
 * `options.dotNotation` is false. v1 writes a number as given (an expression's string stays a
 * string); v2 converts numeric strings to numbers. No input gives one empty item, as in n8n.
 */
export const n8nSetV1Node = defineNode({
  type: 'n8n-nodes-base.set',
  versions: [1, 2],
  schema: SetV1Parameters,
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    const out: Item[] = [];
    for (const [i, item] of items.entries()) {
      const p = await ctx.params(i);
      const dots = p.options.dotNotation !== false;
      const json: Record<string, Json> = p.keepOnlySet ? {} : structuredClone(item.json);
      // A value missing from the export takes n8n's default; one an expression left undefined stays so.
      const raw = (ctx.node.parameters.values ?? {}) as Partial<Record<Kind, Array<Record<string, unknown>>>>;
      const entryValue = (kind: Kind, k: number, value: unknown) =>
        raw[kind]?.[k] && !Object.hasOwn(raw[kind]?.[k] ?? {}, 'value') ? VALUE_DEFAULTS[kind] : value;
      p.values.boolean.forEach(({ name, value }, k) => {
        setPath(json, name, !!entryValue('boolean', k, value), dots);
      });
      p.values.number.forEach(({ name, value }, k) => {
        const v = entryValue('number', k, value);
        const numeric = version >= 2 && typeof v === 'string' && !Number.isNaN(Number(v));
        setPath(json, name, (numeric ? Number(v) : v) as Json, dots);
      });
      p.values.string.forEach(({ name, value }, k) => {
        setPath(json, name, entryValue('string', k, value) as Json, dots);
      });
      // As n8n's Set v1: the item's binary data stays unless only the set values are kept.
      out.push(!p.keepOnlySet && item.binary ? { json, binary: { ...item.binary } } : { json });
    }
    return output(out);
  },
});
