import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { fieldList, getField, isObject, type JsonObject, setField, unsetField } from '../merge/json.js';

const SplitOutParameters = Type.Object(
  {
    /** Field(s) holding the list, comma-separated; `$json.` prefixes are accepted. */
    fieldToSplitOut: Type.String({ minLength: 1 }),
    include: Type.Union(
      [Type.Literal('noOtherFields'), Type.Literal('allOtherFields'), Type.Literal('selectedOtherFields')],
      { default: 'noOtherFields' },
    ),
    fieldsToInclude: Type.Union([Type.String(), Type.Array(Type.String())], { default: '' }),
    options: Type.Object(
      {
        disableDotNotation: Type.Optional(Type.Boolean()),
        destinationFieldName: Type.Optional(Type.String()),
        /** Each output item carries its input item's binary files, as n8n. */
        includeBinary: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's Split Out: one item per element of a list field (or per value of an object field). */
export const splitOutNode = defineNode({
  type: 'n8n-nodes-base.splitOut',
  versions: [1],
  // n8n's Split Out throws; under continueOnFail its engine passes the input through.
  passInputOnFail: true,
  schema: SplitOutParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const dot = p.options.disableDotNotation !== true;
      const fields = p.fieldToSplitOut.split(',').map((f) => f.trim().replace(/^\$json\./, ''));
      const destinations = fieldList(p.options.destinationFieldName ?? '');
      if (destinations.length > 0 && destinations.length !== fields.length) {
        throw new NodeOperationError(
          'If multiple fields to split out are given, the same number of destination fields must be given',
        );
      }
      const item = (ctx.items[i] as Item).json;
      const rows: JsonObject[] = [];
      // `$binary`: one item per binary property of the input item, carrying that file (n8n).
      const files: Array<Record<string, BinaryData>> = [];
      fields.forEach((field, f) => {
        if (field === '$binary') {
          for (const [row, [key, file]] of Object.entries(ctx.items[i]?.binary ?? {}).entries()) {
            rows[row] ??= {};
            files[row] = { ...files[row], [key]: file };
          }
          return;
        }
        const destination = destinations[f] ?? '';
        const target = destination || field;
        for (const [row, element] of elementsOf(getField(item, field, dot)).entries()) {
          const json = rows[row] ?? {};
          if (
            isObject(element) &&
            p.include === 'noOtherFields' &&
            destination === '' &&
            fields.length === 1
          ) {
            Object.assign(json, element);
          } else {
            putField(json, target, element, destination !== '' && dot);
          }
          rows[row] = json;
        }
      });
      const binary = p.options.includeBinary ? (ctx.items[i] as Item).binary : undefined;
      for (const [row, json] of rows.entries()) {
        const own = files[row] ?? binary;
        out.push({ json: withOtherFields(json, item, fields, p, dot), ...(own ? { binary: own } : {}) });
      }
    }
    return output(out);
  },
});

function elementsOf(value: Json | undefined): Json[] {
  if (value === undefined) return [];
  if (value === null || typeof value !== 'object') return [value];
  return Array.isArray(value) ? value : Object.values(value);
}

/** A destination name is a dot path (`data.foo`); a prototype key in it is refused, as in n8n. */
function putField(json: JsonObject, name: string, value: Json, dot: boolean): void {
  try {
    setField(json, name, value, dot);
  } catch {
    throw new NodeOperationError('Invalid destination field name', {
      description: `'${name}' would write to an object's prototype`,
    });
  }
}

function withOtherFields(
  row: JsonObject,
  item: JsonObject,
  fields: string[],
  p: { include: string; fieldsToInclude: string | string[] },
  dot: boolean,
): JsonObject {
  if (p.include === 'allOtherFields') {
    const rest = structuredClone(item);
    for (const field of fields) unsetField(rest, field, dot);
    return { ...rest, ...row };
  }
  if (p.include === 'selectedOtherFields') {
    const include = fieldList(p.fieldsToInclude);
    if (include.length === 0)
      throw new NodeOperationError('No fields specified', { description: 'Please add a field to include' });
    for (const field of include) {
      const value = getField(item, field, dot);
      if (value !== undefined) row[field] = structuredClone(value);
    }
  }
  return row;
}
