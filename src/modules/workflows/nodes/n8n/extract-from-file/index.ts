import { Type } from 'typebox';
import { binaryBytes } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { readCsv } from '../file-helpers/csv.js';
import { htmlRows } from '../file-helpers/html-rows.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { setField } from '../file-helpers/paths.js';
import { extractPdf } from '../file-helpers/pdf.js';
import { readSpreadsheet } from '../file-helpers/sheet.js';
import { decodeText } from '../file-helpers/text.js';

const Operation = Type.Union(
  [
    Type.Literal('csv'),
    Type.Literal('html'),
    Type.Literal('fromIcs'),
    Type.Literal('fromJson'),
    Type.Literal('ods'),
    Type.Literal('pdf'),
    Type.Literal('rtf'),
    Type.Literal('text'),
    Type.Literal('xml'),
    Type.Literal('xls'),
    Type.Literal('xlsx'),
    Type.Literal('binaryToPropery'),
  ],
  { default: 'csv' },
);

const ExtractFromFileParameters = Type.Object(
  {
    operation: Operation,
    binaryPropertyName: Type.String({ default: 'data' }),
    destinationKey: Type.String({ default: 'data' }),
    options: Type.Object(
      {
        delimiter: Type.Optional(Type.String()),
        encoding: Type.Optional(Type.String()),
        fromLine: Type.Optional(Type.Number()),
        maxRowCount: Type.Optional(Type.Number()),
        enableBOM: Type.Optional(Type.Boolean()),
        relaxQuotes: Type.Optional(Type.Boolean()),
        headerRow: Type.Optional(Type.Boolean()),
        includeEmptyCells: Type.Optional(Type.Boolean()),
        range: Type.Optional(Type.String()),
        rawData: Type.Optional(Type.Boolean()),
        readAsString: Type.Optional(Type.Boolean()),
        sheetName: Type.Optional(Type.String()),
        stripBOM: Type.Optional(Type.Boolean()),
        keepSource: Type.Optional(
          Type.Union([Type.Literal('json'), Type.Literal('binary'), Type.Literal('both')]),
        ),
        joinPages: Type.Optional(Type.Boolean()),
        maxPages: Type.Optional(Type.Number()),
        password: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Options = Record<string, unknown> & {
  encoding?: string;
  stripBOM?: boolean;
  keepSource?: 'json' | 'binary' | 'both';
};

/** n8n's "move to JSON" operations: text, JSON, base64 into `destinationKey`, the file dropped. */
function moveTo(
  op: string,
  item: Item,
  property: string,
  destinationKey: string,
  o: Options,
  index: number,
): Item | null {
  if (!item.binary?.[property]) return null;
  const { bytes } = binaryBytes(item, property, index);
  assertSize('file', bytes.length, FILE_LIMITS.textBytes);
  const json: Record<string, Json> =
    o.keepSource && o.keepSource !== 'binary' ? structuredClone(item.json) : {};
  let value: Json;
  if (op === 'binaryToPropery') value = bytes.toString('base64');
  else {
    const text = decodeText(bytes, o.encoding || 'utf8', o.stripBOM !== false);
    if (op === 'fromJson') {
      try {
        value = JSON.parse(text) as Json;
      } catch (error) {
        throw new NodeOperationError('The file is not valid JSON', { description: (error as Error).message });
      }
    } else value = text;
  }
  setField(json, destinationKey, value);
  let binary: Record<string, BinaryData> | undefined;
  if (o.keepSource === 'binary' || o.keepSource === 'both') binary = item.binary;
  else {
    const { [property]: _moved, ...rest } = item.binary ?? {};
    binary = Object.keys(rest).length > 0 ? rest : undefined;
  }
  return { json, ...(binary ? { binary } : {}), pairedItem: { item: index } };
}

/** n8n's `pdf` operation: the PDF's text and details as the item, the file kept as `keepSource` says. */
async function pdfItem(item: Item, property: string, o: Options, index: number): Promise<Item> {
  const { bytes } = binaryBytes(item, property, index);
  const pdf = await extractPdf(bytes, {
    ...(typeof o.password === 'string' ? { password: o.password } : {}),
    ...(typeof o.maxPages === 'number' ? { maxPages: o.maxPages } : {}),
    ...(typeof o.joinPages === 'boolean' ? { joinPages: o.joinPages } : {}),
  });
  const json = o.keepSource && o.keepSource !== 'binary' ? { ...structuredClone(item.json), ...pdf } : pdf;
  let binary: Record<string, BinaryData> | undefined;
  if (o.keepSource === 'binary' || o.keepSource === 'both') binary = item.binary;
  else {
    const { [property]: _read, ...rest } = item.binary ?? {};
    binary = Object.keys(rest).length > 0 ? rest : undefined;
  }
  return { json, ...(binary ? { binary } : {}), pairedItem: { item: index } };
}

/**
 * n8n's Extract from File (v1): a CSV, XLSX, ODS or HTML file to one item per row; a PDF's text and details; a text, JSON or
 * any file (as base64) into a field. Every format is bounded in size and rows.
 */
export const n8nExtractFromFileNode = defineNode({
  type: 'n8n-nodes-base.extractFromFile',
  versions: [1],
  schema: ExtractFromFileParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const o = p.options as Options;
      const op = p.operation;
      if (op === 'text' || op === 'fromJson' || op === 'binaryToPropery') {
        const moved = moveTo(op, item, p.binaryPropertyName, p.destinationKey, o, i);
        if (moved) out.push(moved);
        continue;
      }
      if (op === 'pdf') {
        out.push(await pdfItem(item, p.binaryPropertyName, o, i));
        continue;
      }
      if (op === 'fromIcs' || op === 'xls' || op === 'rtf' || op === 'xml')
        throw new NodeOperationError(`Extracting from '${op}' files is not available on this platform yet`);
      const { bytes } = binaryBytes(item, p.binaryPropertyName, i);
      let rows: Array<Record<string, Json>>;
      if (op === 'csv') {
        assertSize('CSV file', bytes.length, FILE_LIMITS.textBytes);
        rows = readCsv(decodeText(bytes, o.encoding || 'utf8', true), p.options);
      } else if (op === 'html') rows = await htmlRows(decodeText(bytes), p.options.headerRow);
      else rows = await readSpreadsheet(bytes, op, p.options);
      for (const json of rows) out.push({ json, pairedItem: { item: i } });
    }
    return output(out);
  },
});
