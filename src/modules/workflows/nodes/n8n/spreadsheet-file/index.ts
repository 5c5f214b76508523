import { Type } from 'typebox';
import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { readCsv, writeCsv } from '../file-helpers/csv.js';
import { htmlRows } from '../file-helpers/html-rows.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { readSpreadsheet, writeHtmlTable, writeOds, writeXlsx } from '../file-helpers/sheet.js';
import { decodeText } from '../file-helpers/text.js';

const SpreadsheetFileParameters = Type.Object(
  {
    operation: Type.Union([Type.Literal('fromFile'), Type.Literal('toFile')], { default: 'fromFile' }),
    fileFormat: Type.Union(
      [
        Type.Literal('csv'),
        Type.Literal('html'),
        Type.Literal('ods'),
        Type.Literal('rtf'),
        Type.Literal('xls'),
        Type.Literal('xlsx'),
      ],
      { default: 'xls' },
    ),
    binaryPropertyName: Type.String({ default: 'data' }),
    options: Type.Object(
      {
        compression: Type.Optional(Type.Boolean()),
        delimiter: Type.Optional(Type.String()),
        encoding: Type.Optional(Type.String()),
        fileName: Type.Optional(Type.String()),
        headerRow: Type.Optional(Type.Boolean()),
        includeEmptyCells: Type.Optional(Type.Boolean()),
        rawData: Type.Optional(Type.Boolean()),
        readAsString: Type.Optional(Type.Boolean()),
        range: Type.Optional(Type.String()),
        sheetName: Type.Optional(Type.String()),
        fromLine: Type.Optional(Type.Number()),
        maxRowCount: Type.Optional(Type.Number()),
        enableBOM: Type.Optional(Type.Boolean()),
        relaxQuotes: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** The format of a file to read, from its extension or MIME type (n8n lets the parser guess). */
function formatOf(meta: BinaryData, bytes: Buffer): 'csv' | 'html' | 'ods' | 'xlsx' {
  const ext = (meta.fileExtension ?? '').toLowerCase();
  const mime = meta.mimeType.toLowerCase();
  if (ext === 'csv' || mime.includes('csv') || mime === 'text/plain') return 'csv';
  if (ext === 'html' || ext === 'htm' || mime.includes('html')) return 'html';
  if (ext === 'ods' || mime.includes('opendocument.spreadsheet')) return 'ods';
  if (ext === 'xlsx' || mime.includes('spreadsheetml')) return 'xlsx';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return 'xlsx';
  if (ext === 'xls' || mime.includes('ms-excel'))
    throw new NodeOperationError('Legacy XLS files cannot be read here', {
      description: 'Save the file as XLSX, ODS or CSV.',
    });
  return 'csv';
}

/**
 * n8n's legacy Spreadsheet File (v1, v2), replaced by Convert to File and Extract from File: reads a
 * CSV/XLSX/ODS/HTML file to one item per row, or writes all items as one file.
 */
export const n8nSpreadsheetFileNode = defineNode({
  type: 'n8n-nodes-base.spreadsheetFile',
  versions: [1, 2],
  schema: SpreadsheetFileParameters,
  async execute(ctx) {
    const first = await ctx.params(0);
    if (first.operation === 'toFile') {
      if (ctx.items.length === 0) return output([]);
      const rows = ctx.items.map((i) => i.json);
      const format = first.fileFormat;
      const o = first.options;
      let bytes: Buffer;
      let mimeType: string;
      if (format === 'csv') [bytes, mimeType] = [Buffer.from(writeCsv(rows, o)), 'text/csv'];
      else if (format === 'html') [bytes, mimeType] = [Buffer.from(writeHtmlTable(rows, o)), 'text/html'];
      else if (format === 'ods')
        [bytes, mimeType] = [writeOds(rows, o), 'application/vnd.oasis.opendocument.spreadsheet'];
      else if (format === 'xlsx')
        [bytes, mimeType] = [
          await writeXlsx(rows, o),
          'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        ];
      else
        throw new NodeOperationError(`Writing '${format}' files is not available here`, {
          description: 'Choose XLSX, ODS, CSV or HTML: the legacy XLS and RTF writers are not available.',
        });
      assertSize('file to write', bytes.length, FILE_LIMITS.outputBytes);
      const binary = {
        [first.binaryPropertyName]: binaryOf(bytes, mimeType, o.fileName || `spreadsheet.${format}`),
      };
      return output([{ json: {}, binary }]);
    }
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const { bytes, meta } = binaryBytes(item, p.binaryPropertyName, i);
      const format = formatOf(meta, bytes);
      let rows: Array<Record<string, Json>>;
      if (format === 'csv') {
        assertSize('CSV file', bytes.length, FILE_LIMITS.textBytes);
        rows = readCsv(decodeText(bytes, p.options.encoding || 'utf8'), p.options);
      } else if (format === 'html') {
        rows = await htmlRows(decodeText(bytes), p.options.headerRow);
      } else rows = await readSpreadsheet(bytes, format, p.options);
      for (const json of rows) out.push({ json, pairedItem: { item: i } });
    }
    return output(out);
  },
});
