import { type Static, Type } from 'typebox';
import { generatedUuid, shownWhen } from '../../../engine/display-options.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getPath, setPath, unsetPath } from './paths.js';
import { convertField, FIELD_TYPES, type FieldType, parseJsonObject } from './values.js';

/**
 * n8n's Edit Fields (Set) v3.x. 3.0–3.2 list `fields.values` (a value key per type) and choose the
 * kept input fields with `include` (none among them); 3.3+ list `assignments` and keep input fields
 * only with `includeOtherFields`. 3.4 replaced the binary option `includeBinary` by `stripBinary`.
 * Binary data follows n8n's rule (see `compose`).
 */

const LegacyField = Type.Object(
  {
    name: Type.String({ default: '' }),
    type: Type.Enum(['stringValue', 'numberValue', 'booleanValue', 'arrayValue', 'objectValue'] as const, {
      default: 'stringValue',
    }),
    // n8n's editor shows the value of the entry's type only.
    stringValue: Type.Optional(Type.Unknown(shownWhen({ type: ['stringValue'] }))),
    numberValue: Type.Optional(Type.Unknown(shownWhen({ type: ['numberValue'] }))),
    booleanValue: Type.Optional(Type.Unknown(shownWhen({ type: ['booleanValue'] }))),
    arrayValue: Type.Optional(Type.Unknown(shownWhen({ type: ['arrayValue'] }))),
    objectValue: Type.Optional(Type.Unknown(shownWhen({ type: ['objectValue'] }))),
  },
  { additionalProperties: false },
);

/** n8n's defaults of the per-type value keys in 3.0–3.2. */
const LEGACY_DEFAULTS: Record<string, unknown> = {
  stringValue: '',
  numberValue: '',
  booleanValue: 'true',
  arrayValue: '',
  objectValue: '{}',
};

const Assignment = Type.Object(
  {
    /** n8n's editor gives each assignment a UUID; the form does so for a new one. */
    id: Type.Optional(
      Type.String({ title: 'ID', description: 'A new entry gets a fresh UUID', ...generatedUuid }),
    ),
    name: Type.String({ default: '' }),
    /** No default: an expression resolving to undefined gives null (3.2+), not ''. */
    value: Type.Optional(Type.Unknown()),
    type: Type.Enum(FIELD_TYPES, { default: 'string' }),
  },
  { additionalProperties: false },
);

interface Shape {
  assignments: boolean;
  binaryOption: 'includeBinary' | 'stripBinary';
}

function setParameters(shape: Shape) {
  const includeModes: readonly ('all' | 'none' | 'selected' | 'except')[] = shape.assignments
    ? ['all', 'selected', 'except']
    : ['all', 'none', 'selected', 'except'];
  return Type.Object(
    {
      mode: Type.Enum(['manual', 'raw'] as const, { default: 'manual' }),
      /** Repeats each output item in manual (editor) runs, for testing. */
      duplicateItem: Type.Boolean({ default: false }),
      duplicateCount: Type.Integer({ minimum: 0, default: 0, ...shownWhen({ duplicateItem: [true] }) }),
      jsonOutput: Type.Unknown({
        default: '{\n  "my_field_1": "value",\n  "my_field_2": 1\n}\n',
        ...shownWhen({ mode: ['raw'] }),
      }),
      ...(shape.assignments
        ? {
            assignments: Type.Object(
              { assignments: Type.Array(Assignment, { default: [] }) },
              { additionalProperties: false, default: {}, ...shownWhen({ mode: ['manual'] }) },
            ),
            includeOtherFields: Type.Boolean({ default: false }),
          }
        : {
            fields: Type.Object(
              { values: Type.Array(LegacyField, { default: [] }) },
              { additionalProperties: false, default: {}, ...shownWhen({ mode: ['manual'] }) },
            ),
          }),
      // n8n's editor: 3.3+ asks which input fields only when other input fields are kept.
      include: Type.Enum(includeModes, {
        default: 'all',
        ...(shape.assignments ? shownWhen({ '/includeOtherFields': [true] }) : {}),
      }),
      includeFields: Type.String({
        default: '',
        ...shownWhen({
          include: ['selected'],
          ...(shape.assignments ? { '/includeOtherFields': [true] } : {}),
        }),
      }),
      excludeFields: Type.String({
        default: '',
        ...shownWhen({
          include: ['except'],
          ...(shape.assignments ? { '/includeOtherFields': [true] } : {}),
        }),
      }),
      options: Type.Object(
        {
          ...(shape.binaryOption === 'includeBinary'
            ? { includeBinary: Type.Optional(Type.Boolean()) }
            : { stripBinary: Type.Optional(Type.Boolean(shownWhen({ '/includeOtherFields': [true] }))) }),
          ignoreConversionErrors: Type.Optional(Type.Boolean(shownWhen({ '/mode': ['manual'] }))),
          dotNotation: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false },
  );
}

/** The union of both shapes, as execute reads them. */
type SetParams = Static<ReturnType<typeof setParameters>> & {
  assignments?: { assignments?: Array<{ name: string; value?: unknown; type: FieldType }> };
  includeOtherFields?: boolean;
  fields?: { values?: Array<Record<string, unknown> & { name: string; type: string }> };
};

const fieldList = (text: string) =>
  text
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');

/** The fields this item sets, converted to their types. */
function newFields(p: SetParams, itemIndex: number, version: number): Record<string, Json> {
  const ignore = p.options.ignoreConversionErrors === true;
  if (p.mode === 'raw') return parseJsonObject(p.jsonOutput, itemIndex);
  const out: Record<string, Json> = {};
  if (version >= 3.3) {
    for (const a of p.assignments?.assignments ?? []) {
      out[a.name] = convertField(a.name, a.type, a.value, itemIndex, ignore, version);
    }
    return out;
  }
  for (const entry of p.fields?.values ?? []) {
    // A value key missing from the export takes n8n's default; one an expression made null stays null.
    let raw = Object.hasOwn(entry, entry.type) ? entry[entry.type] : LEGACY_DEFAULTS[entry.type];
    if (entry.type === 'objectValue' && raw !== null && raw !== undefined) {
      raw = parseJsonObject(raw, itemIndex, entry.name);
    }
    const type = entry.type.replace('Value', '') as FieldType;
    out[entry.name] = convertField(entry.name, type, raw, itemIndex, ignore, version);
  }
  return out;
}

/** The output item: the kept input fields, then the new fields (dot paths unless turned off). */
function compose(p: SetParams, input: Item, fields: Record<string, Json>, version: number): Item {
  const dots = p.options.dotNotation !== false;
  const include = version >= 3.3 && p.includeOtherFields !== true ? 'none' : p.include;
  let json: Record<string, Json> = {};
  if (include === 'all') json = structuredClone(input.json);
  if (include === 'except') {
    json = structuredClone(input.json);
    for (const key of fieldList(p.excludeFields)) unsetPath(json, key, dots);
  }
  if (include === 'selected') {
    for (const key of fieldList(p.includeFields)) {
      const value = getPath(input.json, key, dots);
      if (value === undefined) continue;
      setPath(
        json,
        dots && key.includes('.') ? (key.split('.').pop() ?? key) : key,
        structuredClone(value),
        dots,
      );
    }
  }
  for (const [name, value] of Object.entries(fields)) setPath(json, name, value, dots);
  // n8n's rule, absent options included: 3.4 keeps binary unless stripped or no input field is kept,
  // earlier versions only with includeBinary.
  const options = p.options as { includeBinary?: boolean; stripBinary?: boolean };
  const keepBinary =
    version >= 3.4 ? !options.stripBinary && include !== 'none' : options.includeBinary === true;
  return keepBinary && input.binary ? { json, binary: structuredClone(input.binary) } : { json };
}

function setNode(versions: number[], shape: Shape) {
  return defineNode({
    type: 'n8n-nodes-base.set',
    versions,
    schema: setParameters(shape),
    async execute(ctx) {
      const version = ctx.node.typeVersion ?? versions[0] ?? 3;
      const out: Item[] = [];
      for (const [i, item] of ctx.items.entries()) {
        let result: Item;
        let p: SetParams | undefined;
        try {
          p = (await ctx.params(i)) as SetParams;
          result = compose(p, item, newFields(p, i, version), version);
        } catch (err) {
          if (ctx.node.continueOnFail !== true) throw err;
          result = { json: { error: (err as Error).message } };
        }
        const copies = p?.duplicateItem && ctx.execution.mode === 'manual' ? p.duplicateCount + 1 : 1;
        for (let c = 0; c < copies; c++) out.push(c === 0 ? result : structuredClone(result));
      }
      return output(out);
    },
  });
}

export const n8nSetV3Nodes = [
  setNode([3, 3.1, 3.2], { assignments: false, binaryOption: 'includeBinary' }),
  setNode([3.3], { assignments: true, binaryOption: 'includeBinary' }),
  setNode([3.4], { assignments: true, binaryOption: 'stripBinary' }),
];
