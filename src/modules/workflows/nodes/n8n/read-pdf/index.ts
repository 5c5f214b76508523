import { Type } from 'typebox';
import { binaryBytes } from '../../../engine/binary.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { extractPdf } from '../file-helpers/pdf.js';

/**
 * n8n's legacy Read PDF (v1), which n8n replaced by Extract from File's `pdf` operation: the same
 * extraction, every page joined, the file kept on the item as n8n keeps it.
 */
export const readPdfNode = defineNode({
  type: 'n8n-nodes-base.readPDF',
  versions: [1],
  schema: Type.Object(
    {
      binaryPropertyName: Type.String({ default: 'data', minLength: 1 }),
      encrypted: Type.Boolean({ default: false }),
      password: Type.String({ default: '' }),
    },
    { additionalProperties: false },
  ),
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const { bytes } = binaryBytes(item, p.binaryPropertyName, i);
      const json = await extractPdf(bytes, p.encrypted && p.password ? { password: p.password } : {});
      out.push({ json, ...(item.binary ? { binary: item.binary } : {}), pairedItem: { item: i } });
    }
    return output(out);
  },
});
