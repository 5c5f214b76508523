import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { type ExtractionValue, extractFromHtml } from '../html/extract.js';
import { ExtractionValues, htmlSources } from '../html/index.js';

const HtmlExtractParameters = Type.Object(
  {
    sourceData: Type.Union([Type.Literal('binary'), Type.Literal('json')], { default: 'json' }),
    dataPropertyName: Type.String({ default: 'data' }),
    extractionValues: ExtractionValues,
    options: Type.Object(
      { trimValues: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's legacy HTML Extract (v1), replaced by the HTML node's "Extract HTML Content": cheerio's text,
 * trimmed unless `trimValues` is false; a dotted `dataPropertyName` reads a nested field.
 */
export const n8nHtmlExtractNode = defineNode({
  type: 'n8n-nodes-base.htmlExtract',
  versions: [1],
  schema: HtmlExtractParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      for (const html of htmlSources(item, p.sourceData, p.dataPropertyName, i)) {
        const values = p.extractionValues.values as ExtractionValue[];
        out.push({
          json: await extractFromHtml(html, values, p.options, 1, true, ctx.deps),
          pairedItem: { item: i },
        });
      }
    }
    return output(out);
  },
});
