import { Type } from 'typebox';
import { binaryBytes } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getField } from '../file-helpers/paths.js';
import { type ExtractionValue, extractFromHtml } from './extract.js';
import { htmlTable } from './table.js';

export const ExtractionValues = Type.Object(
  {
    values: Type.Array(
      Type.Object(
        {
          key: Type.String({ default: '' }),
          cssSelector: Type.String({ default: '' }),
          returnValue: Type.Union(
            [Type.Literal('attribute'), Type.Literal('html'), Type.Literal('text'), Type.Literal('value')],
            { default: 'text' },
          ),
          attribute: Type.Optional(Type.String()),
          skipSelectors: Type.Optional(Type.String()),
          returnArray: Type.Boolean({ default: false }),
        },
        { additionalProperties: false },
      ),
      { default: [] },
    ),
  },
  { additionalProperties: false, default: { values: [] } },
);

const HtmlParameters = Type.Object(
  {
    operation: Type.Union(
      [
        Type.Literal('generateHtmlTemplate'),
        Type.Literal('extractHtmlContent'),
        Type.Literal('convertToHtmlTable'),
      ],
      { default: 'generateHtmlTemplate' },
    ),
    html: Type.String({ default: '' }),
    sourceData: Type.Union([Type.Literal('binary'), Type.Literal('json')], { default: 'json' }),
    dataPropertyName: Type.String({ default: 'data' }),
    extractionValues: ExtractionValues,
    options: Type.Object(
      {
        trimValues: Type.Optional(Type.Boolean()),
        cleanUpText: Type.Optional(Type.Boolean()),
        capitalize: Type.Optional(Type.Boolean()),
        customStyling: Type.Optional(Type.Boolean()),
        caption: Type.Optional(Type.String()),
        tableAttributes: Type.Optional(Type.String()),
        headerAttributes: Type.Optional(Type.String()),
        rowAttributes: Type.Optional(Type.String()),
        cellAttributes: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** The HTML to extract from: a JSON field (a string or a list of strings) or a binary file. */
export function htmlSources(item: Item, sourceData: string, property: string, index: number): string[] {
  if (sourceData === 'binary') return [binaryBytes(item, property, index).bytes.toString('utf8')];
  const value = getField(item.json, property);
  if (value === undefined) throw new NodeOperationError(`No property named "${property}" exists!`);
  return (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/**
 * n8n's HTML node (v1–1.2): a template with `{{ }}` expressions per item, CSS-selector extraction
 * (cheerio; from v1.2 text through html-to-text, with `skipSelectors`), or all items as one table.
 */
export const n8nHtmlNode = defineNode({
  type: 'n8n-nodes-base.html',
  versions: [1, 1.1, 1.2],
  schema: HtmlParameters,
  // The template's `{{ }}` are evaluated per item by the node, as n8n resolves them.
  rawParameters: ['html'],
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const first = await ctx.params(0);
    if (first.operation === 'convertToHtmlTable') {
      if (ctx.items.length === 0) return output([]);
      const perItem = await Promise.all(ctx.items.map((_, i) => ctx.params(i)));
      const table = htmlTable(
        ctx.items,
        first.options,
        (i) => perItem[i]?.options.rowAttributes ?? '',
        (i) => perItem[i]?.options.cellAttributes ?? '',
      );
      return output([{ json: { table } }]);
    }
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      if (p.operation === 'generateHtmlTemplate') {
        const template = typeof ctx.node.parameters.html === 'string' ? ctx.node.parameters.html : p.html;
        const html = template.includes('{{') ? String(await ctx.evaluate(`=${template}`, i)) : template;
        out.push({ json: { html }, pairedItem: { item: i } });
        continue;
      }
      for (const html of htmlSources(item, p.sourceData, p.dataPropertyName, i)) {
        const json: Record<string, Json> = await extractFromHtml(
          html,
          p.extractionValues.values as ExtractionValue[],
          p.options,
          version,
          false,
          ctx.deps,
        );
        out.push({ json, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});
