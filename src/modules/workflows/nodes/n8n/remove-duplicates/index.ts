import { type Static, Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { canonical, fieldList, flattenKeys, getField, pickFields } from '../merge/json.js';

const Fields = Type.Union([Type.String(), Type.Array(Type.String())], { default: '' });

export const RemoveDuplicatesParameters = Type.Object(
  {
    compare: Type.Union(
      [Type.Literal('allFields'), Type.Literal('allFieldsExcept'), Type.Literal('selectedFields')],
      {
        default: 'allFields',
      },
    ),
    fieldsToExclude: Fields,
    fieldsToCompare: Fields,
    options: Type.Object(
      {
        disableDotNotation: Type.Optional(Type.Boolean()),
        removeOtherFields: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Remove Duplicates (v1, v1.1): keeps the first item of each run of items equal on the compared
 * fields. Every compared field must be in every item with one type (v1.1 lets null stand in any type).
 */
export const removeDuplicatesNode = defineNode({
  type: 'n8n-nodes-base.removeDuplicates',
  versions: [1, 1.1],
  schema: RemoveDuplicatesParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    return output(removeDuplicateInputItems(ctx.items, p, (ctx.node.typeVersion ?? 1) > 1));
  },
});

/** The items left when duplicates within the input are removed (v1's logic, also v2's first operation). */
export function removeDuplicateInputItems(
  items: Item[],
  p: Static<typeof RemoveDuplicatesParameters>,
  nullIsAnyType: boolean,
  // Item Lists 3.1 dropped the one-type rule: "1" and 1 are simply different values.
  sameType = true,
): Item[] {
  const first = items[0];
  if (!first) return [];
  const dot = p.options.disableDotNotation !== true;
  const keysOf = (i: Item) => (dot ? flattenKeys(i.json) : Object.keys(i.json));
  let keys: string[];
  if (p.compare === 'allFieldsExcept') {
    const exclude = fieldList(p.fieldsToExclude);
    if (exclude.length === 0)
      throw new NodeOperationError('No fields specified. Please add a field to exclude from comparison');
    keys = keysOf(first).filter((k) => !exclude.includes(k));
  } else if (p.compare === 'selectedFields') {
    keys = fieldList(p.fieldsToCompare).map((k) => k.trim());
    if (keys.length === 0)
      throw new NodeOperationError('No fields specified. Please add a field to compare on');
  } else {
    keys = [...new Set(items.flatMap(keysOf))];
  }
  checkFields(items, keys, dot, nullIsAnyType, sameType);

  const kept: Item[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const id = canonical(keys.map((key) => getField(item.json, key, dot) ?? null));
    if (seen.has(id)) continue;
    seen.add(id);
    kept.push(item);
  }
  if (p.options.removeOtherFields !== true) return kept;
  return kept.map((i) => ({ json: dot ? pickFields(i.json, keys) : pickTop(i.json, keys) }));
}

function pickTop(json: Item['json'], keys: string[]): Item['json'] {
  const out: Item['json'] = {};
  for (const k of keys) if (Object.hasOwn(json, k)) out[k] = json[k] as Item['json'][string];
  return out;
}

/** n8n's checks: a blank name, a field missing from some item, a field whose type varies. */
function checkFields(
  items: Item[],
  keys: string[],
  dot: boolean,
  nullIsAnyType: boolean,
  sameType: boolean,
): void {
  for (const key of keys) {
    if (key === '') throw new NodeOperationError('Name of field to compare is blank');
    let type: string | undefined;
    items.forEach((item, i) => {
      const value = getField(item.json, key, dot);
      if (value === null && nullIsAnyType) return;
      if (value === undefined) {
        throw new NodeOperationError(
          `'${key}' field is missing from some input items`,
          !dot && key.includes('.')
            ? {
                description:
                  "If you're trying to use a nested field, make sure you turn off 'disable dot notation' in the node options",
              }
            : {},
        );
      }
      const t = typeof value;
      if (sameType && type !== undefined && type !== t) {
        throw new NodeOperationError(`'${key}' isn't always the same type`, {
          description: `The type of this field varies between items${nullIsAnyType ? `, in item [${i - 1}] it's a ${type} and in item [${i}] it's a ${t} ` : ''}`,
        });
      }
      type = t;
    });
  }
}
