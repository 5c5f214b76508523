import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';

const XmlParameters = Type.Object(
  {
    mode: Type.Union([Type.Literal('jsonToxml'), Type.Literal('xmlToJson')], { default: 'xmlToJson' }),
    dataPropertyName: Type.String({ default: 'data' }),
    options: Type.Object(
      {
        allowSurrogateChars: Type.Optional(Type.Boolean()),
        attrkey: Type.Optional(Type.String()),
        cdata: Type.Optional(Type.Boolean()),
        charkey: Type.Optional(Type.String()),
        headless: Type.Optional(Type.Boolean()),
        rootName: Type.Optional(Type.String()),
        explicitArray: Type.Optional(Type.Boolean()),
        explicitRoot: Type.Optional(Type.Boolean()),
        ignoreAttrs: Type.Optional(Type.Boolean()),
        mergeAttrs: Type.Optional(Type.Boolean()),
        normalize: Type.Optional(Type.Boolean()),
        normalizeTags: Type.Optional(Type.Boolean()),
        trim: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

const BUILDER_OPTIONS = [
  'allowSurrogateChars',
  'attrkey',
  'cdata',
  'charkey',
  'headless',
  'rootName',
] as const;
const PARSER_OPTIONS = [
  'attrkey',
  'charkey',
  'explicitArray',
  'explicitRoot',
  'ignoreAttrs',
  'mergeAttrs',
  'normalize',
  'normalizeTags',
  'trim',
] as const;

function pick<T extends Record<string, unknown>>(from: T, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));
}

/**
 * XML to JSON with xml2js as n8n runs it (`mergeAttrs` and no `explicitArray` by default; strict mode).
 * xml2js parses through sax, which never expands entities declared in a DTD: a "billion laughs"
 * document is an error ("Invalid character entity"), not an expansion. Input is bounded in size.
 */
async function xmlToJson(xml: string, options: Record<string, unknown>): Promise<Record<string, Json>> {
  assertSize('XML document', Buffer.byteLength(xml), FILE_LIMITS.xmlBytes);
  const { Parser } = await import('xml2js');
  const parser = new Parser({ mergeAttrs: true, explicitArray: false, ...pick(options, PARSER_OPTIONS) });
  try {
    const json = (await parser.parseStringPromise(xml)) as Record<string, Json> | null;
    return json ?? {};
  } catch (error) {
    throw new NodeOperationError('The XML could not be parsed', { description: (error as Error).message });
  }
}

/** n8n's XML node (v1): JSON to XML (xml2js's Builder) or XML to JSON, item by item. */
export const n8nXmlNode = defineNode({
  type: 'n8n-nodes-base.xml',
  versions: [1],
  schema: XmlParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    // xml2js loads when an XML node first runs, not at every start.
    const { Builder } = await import('xml2js');
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      if (p.mode === 'xmlToJson') {
        const xml = item.json[p.dataPropertyName];
        if (xml === undefined)
          throw new NodeOperationError(`Item has no JSON property called "${p.dataPropertyName}"`);
        if (typeof xml !== 'string')
          throw new NodeOperationError(`The property "${p.dataPropertyName}" must be a string of XML`);
        out.push({ json: await xmlToJson(xml, p.options), pairedItem: { item: i } });
      } else {
        const builder = new Builder(pick(p.options, BUILDER_OPTIONS));
        out.push({ json: { [p.dataPropertyName]: builder.buildObject(item.json) }, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});
