import { Type } from 'typebox';
import { blocksToMarkdown } from '../../../../../core/blocks-markdown.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getPath } from '../split-items/index.js';

const MarkdownParameters = Type.Object({
  /** Dot path of the block array in each item (Notion-style blocks, e.g. `results`). */
  field: Type.String({ minLength: 1, default: 'blocks' }),
  destinationField: Type.String({ minLength: 1, default: 'markdown' }),
});

/** Converts each item's block array into Markdown at `destinationField`. */
export const markdownNode = defineNode({
  type: 'n8n-nodes-platform.markdown',
  schema: MarkdownParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const json = structuredClone((ctx.items[i] as Item).json);
      setPath(json, p.destinationField, blocksToMarkdown(getPath(json, p.field)));
      out.push({ json });
    }
    return output(out);
  },
});

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Sets `a.b.c` in `target`, creating objects on the way; refuses prototype keys. */
function setPath(target: Record<string, Json>, path: string, value: Json): void {
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
