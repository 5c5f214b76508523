import type ExcelJS from 'exceljs';

/** exceljs (with its zip and CSV libraries) loads in about a second: only when a spreadsheet is read or written. */
const excel = async () => (await import('exceljs')).default;

import { strToU8, zipSync } from 'fflate';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { cellText, headerOf } from './csv.js';
import { assertSize, FILE_LIMITS } from './limits.js';
import { unzipBounded } from './zip-bounds.js';

export interface SheetReadOptions {
  headerRow?: boolean;
  sheetName?: string;
  range?: string;
  rawData?: boolean;
  readAsString?: boolean;
  includeEmptyCells?: boolean;
}

type Cell = string | number | boolean | null;

/** A1:B3 → zero-based bounds (rows and columns), for the `range` option. */
function parseRange(range: string | undefined): { r0: number; c0: number; r1: number; c1: number } | null {
  if (!range) return null;
  const m = /^([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?$/i.exec(range.trim());
  if (!m) {
    const rowOnly = /^\d+$/.exec(range.trim());
    if (rowOnly)
      return { r0: Number(range) - 1, c0: 0, r1: Number.MAX_SAFE_INTEGER, c1: Number.MAX_SAFE_INTEGER };
    throw new NodeOperationError(`Invalid range '${range}'`, {
      description: 'Use A1 notation, e.g. A2:C10.',
    });
  }
  const col = (s: string) => [...s.toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0) - 1;
  return {
    r0: Number(m[2]) - 1,
    c0: col(m[1] ?? 'A'),
    r1: m[4] ? Number(m[4]) - 1 : Number.MAX_SAFE_INTEGER,
    c1: m[3] ? col(m[3]) : Number.MAX_SAFE_INTEGER,
  };
}

/** Rows (arrays of cells) → n8n's items: objects by the header row, or `{ row: [...] }` without one. */
function rowsToObjects(grid: Cell[][], o: SheetReadOptions): Array<Record<string, Json>> {
  const box = parseRange(o.range);
  const rows = box
    ? grid
        .slice(box.r0, box.r1 + 1)
        .map((r) => r.slice(box.c0, box.c1 === Number.MAX_SAFE_INTEGER ? undefined : box.c1 + 1))
    : grid;
  const nonEmpty = rows.filter((r) => r.some((c) => c !== null && c !== ''));
  if (o.headerRow === false)
    return nonEmpty.map((r) => ({ row: r.map((c) => c ?? (o.includeEmptyCells ? '' : null)) }));
  const [header = [], ...body] = nonEmpty;
  return body.map((r) => {
    const json: Record<string, Json> = {};
    header.forEach((h, i) => {
      const v = r[i] ?? null;
      if (v === null || v === '') {
        if (o.includeEmptyCells) json[String(h ?? `__EMPTY_${i}`)] = '';
        return;
      }
      json[String(h ?? `__EMPTY_${i}`)] = v;
    });
    return json;
  });
}

function excelCell(cell: ExcelJS.Cell, o: SheetReadOptions): Cell {
  const v = cell.value;
  if (v === null || v === undefined) return null;
  // Spreadsheets show booleans as TRUE/FALSE; exceljs's text says true/false.
  if (o.readAsString) return typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : cell.text;
  if (v instanceof Date) return o.rawData ? v.toISOString() : cell.text || v.toISOString();
  if (typeof v === 'object') {
    if ('result' in v) return (v.result as Cell) ?? null;
    if ('richText' in v) return v.richText.map((t) => t.text).join('');
    if ('text' in v) return String(v.text);
    if ('error' in v) return String(v.error);
    return cell.text;
  }
  return v as Cell;
}

async function readXlsx(bytes: Buffer, o: SheetReadOptions): Promise<Cell[][]> {
  // The parts are inflated once under the cap first: exceljs itself inflates without a bound.
  unzipBounded(bytes, 'spreadsheet');
  const workbook = new (await excel()).Workbook();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (error) {
    throw new NodeOperationError('The file is not a readable XLSX spreadsheet', {
      description: (error as Error).message,
    });
  }
  const sheet = o.sheetName ? workbook.getWorksheet(o.sheetName) : workbook.worksheets[0];
  if (!sheet) throw new NodeOperationError(`Sheet '${o.sheetName ?? ''}' not found`);
  if (sheet.rowCount > FILE_LIMITS.rows)
    throw new NodeOperationError(`The spreadsheet has more than ${FILE_LIMITS.rows} rows`);
  const grid: Cell[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row, rowNumber) => {
    const cells: Cell[] = [];
    row.eachCell({ includeEmpty: true }, (cell, col) => {
      cells[col - 1] = excelCell(cell, o);
    });
    grid[rowNumber - 1] = Array.from(cells, (c) => c ?? null);
  });
  return Array.from(grid, (r) => r ?? []);
}

type XmlNode = { $?: Record<string, string>; _?: string; [child: string]: unknown };

const list = (v: unknown): XmlNode[] => (Array.isArray(v) ? (v as XmlNode[]) : v ? [v as XmlNode] : []);

/** The text of an ODS cell: its `text:p` paragraphs, joined by newlines. */
function odsText(cell: XmlNode): string {
  return list(cell['text:p'])
    .map((p) => (typeof p === 'string' ? p : (p._ ?? '')))
    .join('\n');
}

function odsCell(cell: XmlNode, o: SheetReadOptions): Cell {
  const a = cell.$ ?? {};
  const type = a['office:value-type'];
  if (!type) return null;
  if (o.readAsString) return odsText(cell);
  if (type === 'float' || type === 'percentage' || type === 'currency') return Number(a['office:value']);
  if (type === 'boolean') return a['office:boolean-value'] === 'true';
  if (type === 'date')
    return o.rawData ? (a['office:date-value'] ?? null) : odsText(cell) || (a['office:date-value'] ?? null);
  return odsText(cell);
}

/** ODS (OpenDocument) sheets: content.xml read with xml2js; repeated rows and cells are bounded. */
async function readOds(bytes: Buffer, o: SheetReadOptions): Promise<Cell[][]> {
  const [content] = unzipBounded(bytes, 'spreadsheet', (name) => name === 'content.xml');
  if (!content) throw new NodeOperationError('The file is not a readable ODS spreadsheet (no content.xml)');
  let doc: XmlNode;
  try {
    const { Parser } = await import('xml2js');
    doc = (await new Parser({ explicitArray: true }).parseStringPromise(
      Buffer.from(content.bytes).toString('utf8'),
    )) as XmlNode;
  } catch (error) {
    throw new NodeOperationError('The ODS spreadsheet could not be read', {
      description: (error as Error).message,
    });
  }
  const body = list(list(doc['office:document-content'])[0]?.['office:body'])[0];
  const tables = list(list(body?.['office:spreadsheet'])[0]?.['table:table']);
  const table = o.sheetName ? tables.find((t) => t.$?.['table:name'] === o.sheetName) : tables[0];
  if (!table) throw new NodeOperationError(`Sheet '${o.sheetName ?? ''}' not found`);
  const grid: Cell[][] = [];
  let cellsSeen = 0;
  for (const row of list(table['table:table-row'])) {
    const cells: Cell[] = [];
    for (const cell of list(row['table:table-cell'])) {
      const repeat = Math.min(Number(cell.$?.['table:number-columns-repeated'] ?? 1), 1024);
      const value = odsCell(cell, o);
      // A trailing run of empty cells (how ODS pads a row to the sheet's width) is not data.
      for (let k = 0; k < repeat; k++) cells.push(value);
    }
    while (cells.length > 0 && cells[cells.length - 1] === null) cells.pop();
    const rowRepeat = Math.min(
      Number(row.$?.['table:number-rows-repeated'] ?? 1),
      cells.length === 0 ? 1 : FILE_LIMITS.rows,
    );
    for (let k = 0; k < rowRepeat; k++) grid.push(cells);
    cellsSeen += cells.length * rowRepeat;
    if (grid.length > FILE_LIMITS.rows || cellsSeen > FILE_LIMITS.rows * 100)
      throw new NodeOperationError(`The spreadsheet has more than ${FILE_LIMITS.rows} rows`);
  }
  while (grid.length > 0 && (grid[grid.length - 1]?.length ?? 0) === 0) grid.pop();
  return grid;
}

export async function readSpreadsheet(
  bytes: Buffer,
  format: 'xlsx' | 'ods',
  o: SheetReadOptions,
): Promise<Array<Record<string, Json>>> {
  assertSize('spreadsheet', bytes.length, FILE_LIMITS.spreadsheetBytes);
  const grid = format === 'ods' ? await readOds(bytes, o) : await readXlsx(bytes, o);
  return rowsToObjects(grid, o);
}

export interface SheetWriteOptions {
  headerRow?: boolean;
  sheetName?: string;
}

function gridOf(rows: Array<Record<string, Json>>, o: SheetWriteOptions): Cell[][] {
  const header = headerOf(rows);
  const body = rows.map((r) => header.map((h) => cellText(r[h])));
  return o.headerRow === false ? body : [header, ...body];
}

export async function writeXlsx(rows: Array<Record<string, Json>>, o: SheetWriteOptions): Promise<Buffer> {
  const workbook = new (await excel()).Workbook();
  const sheet = workbook.addWorksheet(o.sheetName || 'Sheet');
  for (const r of gridOf(rows, o)) sheet.addRow(r);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function odsCellXml(v: Cell): string {
  if (v === null) return '<table:table-cell/>';
  if (typeof v === 'number')
    return `<table:table-cell office:value-type="float" office:value="${v}"><text:p>${v}</text:p></table:table-cell>`;
  if (typeof v === 'boolean')
    return `<table:table-cell office:value-type="boolean" office:boolean-value="${v}"><text:p>${v ? 'TRUE' : 'FALSE'}</text:p></table:table-cell>`;
  return `<table:table-cell office:value-type="string"><text:p>${esc(v)}</text:p></table:table-cell>`;
}

/** A minimal, valid ODS: the `mimetype` entry first and stored, a manifest, and the sheet's content.xml. */
export function writeOds(rows: Array<Record<string, Json>>, o: SheetWriteOptions): Buffer {
  const ns =
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"';
  const body = gridOf(rows, o)
    .map((r) => `<table:table-row>${r.map(odsCellXml).join('')}</table:table-row>`)
    .join('');
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ns} office:version="1.2"><office:body><office:spreadsheet><table:table table:name="${esc(o.sheetName || 'Sheet')}">${body}</table:table></office:spreadsheet></office:body></office:document-content>`;
  const manifest =
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>';
  return Buffer.from(
    zipSync({
      mimetype: [strToU8('application/vnd.oasis.opendocument.spreadsheet'), { level: 0 }],
      'META-INF/manifest.xml': strToU8(manifest),
      'content.xml': strToU8(content),
    }),
  );
}

/** An HTML table of the rows (n8n's spreadsheet "html" format). */
export function writeHtmlTable(rows: Array<Record<string, Json>>, o: SheetWriteOptions): string {
  const grid = gridOf(rows, o);
  const tr = (r: Cell[]) =>
    `<tr>${r.map((c) => `<td>${c === null ? '' : typeof c === 'boolean' ? (c ? 'TRUE' : 'FALSE') : esc(String(c))}</td>`).join('')}</tr>`;
  return `<html><head><meta charset="utf-8"/><title>${esc(o.sheetName || 'Sheet')}</title></head><body><table>${grid.map(tr).join('')}</table></body></html>`;
}
