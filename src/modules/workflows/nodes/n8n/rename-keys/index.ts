import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getField, isObject, type JsonObject, setField, unsetField } from '../merge/json.js';
import { keyRegex } from './key-regex.js';

const RenameKeysParameters = Type.Object(
  {
    keys: Type.Object(
      {
        key: Type.Optional(
          Type.Array(
            Type.Object(
              { currentKey: Type.String({ default: '' }), newKey: Type.String({ default: '' }) },
              { additionalProperties: false },
            ),
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    additionalOptions: Type.Object(
      {
        regexReplacement: Type.Optional(
          Type.Object(
            {
              replacements: Type.Optional(
                Type.Array(
                  Type.Object(
                    {
                      regExNotice: Type.Optional(Type.String()),
                      searchRegex: Type.String({ default: '' }),
                      replaceRegex: Type.String({ default: '' }),
                      options: Type.Object(
                        {
                          caseInsensitive: Type.Optional(Type.Boolean()),
                          depth: Type.Optional(Type.Integer({ minimum: -1 })),
                        },
                        { additionalProperties: false, default: {} },
                      ),
                    },
                    { additionalProperties: false },
                  ),
                ),
              ),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Rename Keys: renames fields (dot paths; a missing one is skipped), then renames keys matching
 * regular expressions down to a depth (-1: all levels; arrays are walked, their indexes kept).
 */
export const renameKeysNode = defineNode({
  type: 'n8n-nodes-base.renameKeys',
  versions: [1],
  // n8n's Rename Keys throws; under continueOnFail its engine passes the input through.
  passInputOnFail: true,
  schema: RenameKeysParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const source = ctx.items[i] as Item;
      const json = structuredClone(source.json);
      for (const { currentKey, newKey } of p.keys.key ?? []) {
        if (currentKey === '' || newKey === '' || currentKey === newKey) continue;
        const value = getField(source.json, currentKey);
        if (value === undefined) continue;
        try {
          setField(json, newKey, structuredClone(value));
        } catch {
          throw new NodeOperationError(`Invalid new key name '${newKey}'`, {
            description: "A key may not write to an object's prototype",
          });
        }
        unsetField(json, currentKey);
      }
      for (const r of p.additionalOptions.regexReplacement?.replacements ?? []) {
        const rename = keyRegex(r.searchRegex, r.options.caseInsensitive === true);
        renameDeep(json, r.options.depth ?? -1, (key) => rename(key, r.replaceRegex));
      }
      out.push({ json, ...(source.binary ? { binary: source.binary } : {}) });
    }
    return output(out);
  },
});

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

function renameDeep(value: Json, depth: number, rename: (key: string) => string | null): void {
  if (Array.isArray(value)) {
    if (depth !== 0) for (const v of value) renameDeep(v, depth - 1, rename);
    return;
  }
  if (!isObject(value)) return;
  const obj: JsonObject = value;
  for (const key of Object.keys(obj)) {
    const child = obj[key] as Json;
    if (child !== null && typeof child === 'object' && depth !== 0) renameDeep(child, depth - 1, rename);
    const next = rename(key);
    if (next === null || next === key || FORBIDDEN.has(next)) continue;
    obj[next] = child;
    delete obj[key];
  }
}
