import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getField, type JsonObject } from './json.js';

const MergeV1Parameters = Type.Object(
  {
    mode: Type.Enum(
      [
        'append',
        'keepKeyMatches',
        'mergeByIndex',
        'mergeByKey',
        'multiplex',
        'passThrough',
        'removeKeyMatches',
        'wait',
      ] as const,
      { default: 'append' },
    ),
    join: Type.Enum(['inner', 'left', 'outer'] as const, { default: 'left' }),
    propertyName1: Type.String({ default: '' }),
    propertyName2: Type.String({ default: '' }),
    output: Type.Enum(['input1', 'input2'] as const, { default: 'input1' }),
    overwrite: Type.Enum(['always', 'blank', 'undefined'] as const, { default: 'always' }),
  },
  { additionalProperties: false },
);

/** Multiplex makes m × n items: past this it is a node error, not a memory stall. */
const MAX_MULTIPLEX_ITEMS = 100_000;

/** Item i of both inputs: input 2's fields (and binary) over input 1's. */
function mergeByIndex(in1: Item[], in2: Item[], join: 'inner' | 'left' | 'outer'): Item[] {
  if (in1.length === 0) return join === 'outer' ? in2 : [];
  if (in2.length === 0) return join === 'inner' ? [] : in1;
  const count =
    join === 'inner'
      ? Math.min(in1.length, in2.length)
      : join === 'outer'
        ? Math.max(in1.length, in2.length)
        : in1.length;
  const out: Item[] = [];
  for (let i = 0; i < count; i++) {
    const a = in1[i];
    const b = in2[i];
    if (!a || !b) {
      out.push((a ?? b) as Item);
      continue;
    }
    const item: Item = { json: { ...a.json, ...b.json } };
    if (a.binary || b.binary) item.binary = { ...a.binary, ...b.binary };
    out.push(item);
  }
  return out;
}

/** n8n's key for a reference value: strings and numbers (as text) compare; other values never match. */
function keyOf(value: Json | undefined): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return null;
}

/** keepKeyMatches, removeKeyMatches, mergeByKey — n8n v1's rules, including its skips. */
function byKey(
  mode: 'keepKeyMatches' | 'mergeByKey' | 'removeKeyMatches',
  in1: Item[],
  in2: Item[],
  p: { propertyName1: string; propertyName2: string; overwrite: 'always' | 'blank' | 'undefined' },
): Item[] {
  if (in2.length === 0 || !p.propertyName1 || !p.propertyName2) return mode === 'keepKeyMatches' ? [] : in1;
  const copy = new Map<string, JsonObject>();
  for (const entry of in2) {
    const key = getField(entry.json, p.propertyName2);
    // n8n skips falsy keys of input 2 (`!key`).
    if (!key) continue;
    copy.set(String(key), entry.json);
  }
  const out: Item[] = [];
  for (const entry of in1) {
    const key = keyOf(getField(entry.json, p.propertyName1));
    const match = key === null ? undefined : copy.get(key);
    if (mode === 'removeKeyMatches') {
      if (!match) out.push(entry);
    } else if (mode === 'keepKeyMatches') {
      if (match) out.push(entry);
    } else if (key !== null) {
      if (!match) {
        out.push(entry);
        continue;
      }
      const json: JsonObject = structuredClone(entry.json);
      for (const [field, value] of Object.entries(match)) {
        if (field === p.propertyName2) continue;
        const current = json[field];
        if (
          p.overwrite === 'always' ||
          (p.overwrite === 'undefined' && !Object.hasOwn(json, field)) ||
          (p.overwrite === 'blank' && (current === null || current === undefined || current === ''))
        )
          json[field] = value;
      }
      out.push({ ...entry, json });
    }
  }
  return out;
}

/**
 * n8n's Merge v1: append, merge by index (inner/left/outer join), merge by key (overwrite always, if
 * blank, if missing), keep/remove key matches, multiplex (every pair), pass one input through, or wait
 * for both and send one empty item.
 */
export const mergeV1Node = defineNode({
  type: 'n8n-nodes-base.merge',
  versions: [1],
  schema: MergeV1Parameters,
  inputs: 2,
  async execute(ctx) {
    const p = await ctx.params(0);
    const in1 = ctx.inputs[0] ?? [];
    const in2 = ctx.inputs[1] ?? [];
    switch (p.mode) {
      case 'append':
        return output([...in1, ...in2]);
      case 'mergeByIndex':
        return output(mergeByIndex(in1, in2, p.join));
      case 'multiplex': {
        if (in1.length * in2.length > MAX_MULTIPLEX_ITEMS)
          throw new NodeOperationError(
            `Multiplex would make ${in1.length * in2.length} items; at most ${MAX_MULTIPLEX_ITEMS}`,
          );
        const out: Item[] = [];
        for (const a of in1) for (const b of in2) out.push({ json: { ...a.json, ...b.json } });
        return output(out);
      }
      case 'keepKeyMatches':
      case 'mergeByKey':
      case 'removeKeyMatches':
        return output(byKey(p.mode, in1, in2, p));
      case 'passThrough':
        return output(p.output === 'input1' ? in1 : in2);
      case 'wait':
        return output([{ json: {} }]);
    }
  },
});
