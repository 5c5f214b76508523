import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { writeCsv } from '../file-helpers/csv.js';
import { assertSize, FILE_LIMITS } from '../file-helpers/limits.js';
import { getField } from '../file-helpers/paths.js';
import { writeHtmlTable, writeOds, writeXlsx } from '../file-helpers/sheet.js';
import { encodeText } from '../file-helpers/text.js';
import { type EventInput, EventParameters, eventFile } from '../i-calendar/ics.js';

const Operation = Type.Union(
  [
    Type.Literal('csv'),
    Type.Literal('html'),
    Type.Literal('iCal'),
    Type.Literal('toJson'),
    Type.Literal('ods'),
    Type.Literal('rtf'),
    Type.Literal('toText'),
    Type.Literal('toBinary'),
    Type.Literal('xls'),
    Type.Literal('xlsx'),
  ],
  { default: 'csv' },
);

const ConvertToFileParameters = Type.Object(
  {
    operation: Operation,
    binaryPropertyName: Type.String({ default: 'data' }),
    sourceProperty: Type.String({ default: '' }),
    mode: Type.Union([Type.Literal('once'), Type.Literal('each')], { default: 'once' }),
    ...EventParameters,
    options: Type.Object(
      {
        addBOM: Type.Optional(Type.Boolean()),
        compression: Type.Optional(Type.Boolean()),
        dataIsBase64: Type.Optional(Type.Boolean()),
        delimiter: Type.Optional(Type.String()),
        encoding: Type.Optional(Type.String()),
        fileName: Type.Optional(Type.String()),
        format: Type.Optional(Type.Boolean()),
        headerRow: Type.Optional(Type.Boolean()),
        mimeType: Type.Optional(Type.String()),
        sheetName: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Options = {
  addBOM?: boolean;
  dataIsBase64?: boolean;
  delimiter?: string;
  encoding?: string;
  fileName?: string;
  format?: boolean;
  headerRow?: boolean;
  mimeType?: string;
  sheetName?: string;
};

const MIME: Record<string, string> = {
  csv: 'text/csv',
  html: 'text/html',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** All items as one spreadsheet file (n8n's spreadsheet operations). */
async function spreadsheet(format: string, rows: Array<Record<string, Json>>, o: Options): Promise<Buffer> {
  if (format === 'csv') return encodeText(writeCsv(rows, o), 'utf8');
  if (format === 'html') return Buffer.from(writeHtmlTable(rows, o));
  if (format === 'ods') return writeOds(rows, o);
  if (format === 'xlsx') return writeXlsx(rows, o);
  throw new NodeOperationError(`The '${format}' format is not supported here`, {
    description: 'Use CSV, XLSX, ODS or HTML: the legacy XLS and RTF writers are not available.',
  });
}

function file(bytes: Buffer, mimeType: string, fileName: string) {
  assertSize('file to write', bytes.length, FILE_LIMITS.outputBytes);
  return binaryOf(bytes, mimeType, fileName);
}

/**
 * n8n's Convert to File (v1, 1.1): items to a CSV/XLSX/ODS/HTML file, JSON (all items at once or
 * one file per item), a field's text or base64 bytes, or an iCal event.
 */
export const n8nConvertToFileNode = defineNode({
  type: 'n8n-nodes-base.convertToFile',
  versions: [1, 1.1],
  schema: ConvertToFileParameters,
  async execute(ctx) {
    const first = await ctx.params(0);
    const op = first.operation;
    const o = first.options as Options;
    if (['csv', 'html', 'ods', 'rtf', 'xls', 'xlsx'].includes(op)) {
      if (ctx.items.length === 0) return output([]);
      const bytes = await spreadsheet(
        op,
        ctx.items.map((i) => i.json),
        o,
      );
      const fileName = o.fileName || `file.${op}`;
      return output([
        {
          json: {},
          binary: {
            [first.binaryPropertyName]: file(bytes, MIME[op] ?? 'application/octet-stream', fileName),
          },
        },
      ]);
    }
    if (op === 'toJson' && first.mode === 'once') {
      if (ctx.items.length === 0) return output([]);
      const text = JSON.stringify(
        ctx.items.map((i) => i.json),
        null,
        o.format ? 2 : undefined,
      );
      const bytes = encodeText(text, o.encoding || 'utf8', o.addBOM);
      return output([
        {
          json: {},
          binary: { [first.binaryPropertyName]: file(bytes, 'application/json', o.fileName || 'file.json') },
        },
      ]);
    }
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const po = p.options as Options;
      let data: ReturnType<typeof binaryOf>;
      if (op === 'toJson') {
        const text = JSON.stringify(item.json, null, po.format ? 2 : undefined);
        data = file(
          encodeText(text, po.encoding || 'utf8', po.addBOM),
          'application/json',
          po.fileName || 'file.json',
        );
      } else if (op === 'iCal') {
        const ics = eventFile(p as unknown as EventInput, ctx.deps.now(), 'UTC', randomUUID());
        data = file(Buffer.from(ics), 'text/calendar', po.fileName || 'event.ics');
      } else {
        const value = getField(item.json, p.sourceProperty);
        if (value === undefined) throw new NodeOperationError(`The item has no field '${p.sourceProperty}'`);
        if (op === 'toText') {
          const textValue = typeof value === 'string' ? value : JSON.stringify(value);
          data = file(
            encodeText(textValue, po.encoding || 'utf8', po.addBOM),
            'text/plain',
            po.fileName || 'file.txt',
          );
        } else {
          const raw = typeof value === 'string' ? value : JSON.stringify(value);
          const bytes =
            po.dataIsBase64 !== false
              ? Buffer.from(raw, 'base64')
              : encodeText(raw, po.encoding || 'utf8', po.addBOM);
          data = file(bytes, po.mimeType || 'application/octet-stream', po.fileName || '');
          if (!po.fileName) delete data.fileName;
        }
      }
      out.push({ json: {}, binary: { [p.binaryPropertyName]: data }, pairedItem: { item: i } });
    }
    return output(out);
  },
});
