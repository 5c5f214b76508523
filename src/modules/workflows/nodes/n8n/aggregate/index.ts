import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { fieldList, getField, type JsonObject, setField } from '../merge/json.js';

const FieldToAggregate = Type.Object(
  {
    fieldToAggregate: Type.String({ default: '' }),
    renameField: Type.Boolean({ default: false }),
    outputFieldName: Type.String({ default: '' }),
  },
  { additionalProperties: false },
);

const Fields = Type.Union([Type.String(), Type.Array(Type.String())], { default: '' });

const AggregateParameters = Type.Object(
  {
    aggregate: Type.Union([Type.Literal('aggregateIndividualFields'), Type.Literal('aggregateAllItemData')], {
      default: 'aggregateIndividualFields',
    }),
    fieldsToAggregate: Type.Object(
      { fieldToAggregate: Type.Array(FieldToAggregate, { default: [] }) },
      {
        additionalProperties: false,
        default: { fieldToAggregate: [{ fieldToAggregate: '', renameField: false }] },
      },
    ),
    destinationFieldName: Type.String({ default: 'data' }),
    include: Type.Union(
      [Type.Literal('allFields'), Type.Literal('specifiedFields'), Type.Literal('allFieldsExcept')],
      {
        default: 'allFields',
      },
    ),
    fieldsToExclude: Fields,
    fieldsToInclude: Fields,
    options: Type.Object(
      {
        groupByFields: Type.Optional(Type.String()),
        disableDotNotation: Type.Optional(Type.Boolean()),
        mergeLists: Type.Optional(Type.Boolean()),
        keepMissing: Type.Optional(Type.Boolean()),
        /** The items' binary files on the output item (a clashing key gets `_1`, `_2`…), as n8n. */
        includeBinaries: Type.Optional(Type.Boolean()),
        keepOnlyUnique: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = {
  fieldsToAggregate: {
    fieldToAggregate: Array<{ fieldToAggregate: string; renameField: boolean; outputFieldName: string }>;
  };
  destinationFieldName: string;
  include: string;
  fieldsToExclude: string | string[];
  fieldsToInclude: string | string[];
  options: { disableDotNotation?: boolean; mergeLists?: boolean; keepMissing?: boolean };
};

/** n8n's Aggregate: many items into one, per field (lists of values) or whole items into one list. */
export const aggregateNode = defineNode({
  type: 'n8n-nodes-base.aggregate',
  versions: [1],
  // n8n's Aggregate throws; under continueOnFail its engine passes the input through.
  passInputOnFail: true,
  schema: AggregateParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    const items = ctx.items.map((i) => i.json);
    const groupBy = fieldList(p.options.groupByFields ?? '');
    const build = p.aggregate === 'aggregateIndividualFields' ? individualFields : allItemData;
    const binaries = (from: Item[]) =>
      p.options.includeBinaries ? binariesOf(from, p.options.keepOnlyUnique === true) : undefined;
    const withBinaries = (json: JsonObject, from: Item[]): Item => {
      const binary = binaries(from);
      return binary ? { json, binary } : { json };
    };
    if (groupBy.length === 0) return output([withBinaries(build(items, p, []), ctx.items)]);

    const groups = new Map<string, { values: Json[]; items: JsonObject[]; sources: Item[] }>();
    for (const [index, item] of items.entries()) {
      const values = groupBy.map((field) => {
        const value = getField(item, field);
        if (value !== null && typeof value === 'object')
          throw new NodeOperationError(
            `Field "${field}" has a non-scalar value which cannot be used for grouping.`,
            {
              description:
                'Only scalar values (string, number, boolean, null) can be used in "Group By Fields".',
            },
          );
        return value ?? null;
      });
      const key = JSON.stringify(values);
      const group = groups.get(key) ?? { values, items: [], sources: [] };
      group.items.push(item);
      group.sources.push(ctx.items[index] as Item);
      groups.set(key, group);
    }
    const out: Item[] = [];
    for (const group of groups.values()) {
      const json: JsonObject = {};
      groupBy.forEach((field, i) => {
        setField(json, field, group.values[i] as Json);
      });
      out.push(withBinaries({ ...json, ...build(group.items, p, groupBy) }, group.sources));
    }
    return output(out);
  },
});

/**
 * n8n's `addBinariesToItem`: every binary of the items under its own key, a key already taken getting
 * `_1`, `_2`…; with `keepOnlyUnique`, a file like one already kept (same type, extension and size) is left out.
 */
function binariesOf(items: Item[], uniqueOnly: boolean): Record<string, BinaryData> | undefined {
  const out: Record<string, BinaryData> = Object.create(null);
  const kept: BinaryData[] = [];
  let any = false;
  for (const item of items) {
    for (const [key, file] of Object.entries(item.binary ?? {})) {
      if (
        uniqueOnly &&
        kept.some(
          (k) =>
            k.mimeType === file.mimeType &&
            k.fileType === file.fileType &&
            k.fileSize === file.fileSize &&
            k.fileExtension === file.fileExtension,
        )
      )
        continue;
      kept.push(file);
      let name = key;
      for (let i = 1; name in out; i++) name = `${key}_${i}`;
      out[name] = file;
      any = true;
    }
  }
  return any ? { ...out } : undefined;
}

/** True when one dot path is the other or lies under it. */
function overlaps(a: string, b: string): boolean {
  const x = a.split('.');
  const y = b.split('.');
  return x.slice(0, Math.min(x.length, y.length)).every((s, i) => s === y[i]);
}

function individualFields(items: JsonObject[], p: Params, groupBy: string[]): JsonObject {
  const dot = p.options.disableDotNotation !== true;
  const specs = p.fieldsToAggregate.fieldToAggregate;
  if (specs.length === 0)
    throw new NodeOperationError('No fields specified', { description: 'Please add a field to aggregate' });
  const values: Record<string, Json[]> = {};
  const used: string[] = [];
  for (const spec of specs) {
    const input = spec.fieldToAggregate;
    const name =
      spec.outputFieldName || (dot && input.includes('.') ? (input.split('.').pop() as string) : input);
    const label = spec.renameField ? spec.outputFieldName : groupBy.length > 0 ? name : input;
    if (used.includes(label))
      throw new NodeOperationError(`The '${label}' output field is used more than once`, {
        description: 'Please make sure each output field name is unique',
      });
    used.push(label);
    const clash = groupBy.find((g) => overlaps(label, g));
    if (clash)
      throw new NodeOperationError(`The output field '${label}' conflicts with a Group By field '${clash}'`, {
        description: 'Please rename the aggregated field or choose a different Group By field',
      });
    if (input === '') continue;
    const list: Json[] = [];
    for (const item of items) {
      let value = getField(item, input, dot);
      if (p.options.keepMissing !== true) {
        if (Array.isArray(value)) value = value.filter((v) => v !== null);
        else if (value === null || value === undefined) continue;
      }
      if (Array.isArray(value) && p.options.mergeLists === true) list.push(...value);
      else list.push(value ?? null);
    }
    values[name] = list;
  }
  const json: JsonObject = {};
  for (const [key, list] of Object.entries(values)) setField(json, key, list, dot);
  return json;
}

function allItemData(items: JsonObject[], p: Params, groupBy: string[]): JsonObject {
  const clash = groupBy.find((g) => overlaps(p.destinationFieldName, g));
  if (clash)
    throw new NodeOperationError(
      `The destination field '${p.destinationFieldName}' conflicts with a Group By field '${clash}'`,
      { description: 'Please choose a different destination field name or Group By field' },
    );
  const exclude = p.include === 'allFieldsExcept' ? fieldList(p.fieldsToExclude) : [];
  const include = p.include === 'specifiedFields' ? fieldList(p.fieldsToInclude) : [];
  let list = items;
  if (exclude.length > 0 || include.length > 0) {
    list = items
      .map((item) => {
        const kept: JsonObject = {};
        for (const [k, v] of Object.entries(item)) {
          if (exclude.includes(k)) continue;
          if (include.length > 0 && !include.includes(k)) continue;
          kept[k] = v;
        }
        return kept;
      })
      .filter((item) => Object.keys(item).length > 0);
  }
  return { [p.destinationFieldName]: list };
}
