import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import type { Cell, Rows } from './client.js';

export const ROW_NUMBER = 'row_number';

/** n8n's "Data Location on Sheet" of a read. */
export interface RangeDetection {
  rangeDefinition?: string;
  readRowsUntil?: string;
  headerRow?: number | string;
  firstDataRow?: number | string;
  range?: string;
}

type Row = Array<Cell | undefined>;

const filled = (c: Cell | undefined) => (c !== undefined && c !== '' && c !== null) || typeof c === 'number';

function addRowNumber(data: Row[], headerRow: number): Row[] {
  if (data.length === 0) return data;
  const out = data.map((row, i) => [i + 1, ...row]);
  if (out[headerRow]) out[headerRow][0] = ROW_NUMBER;
  return out;
}

function removeEmptyColumns(data: Row[]): Row[] {
  if (data.length === 0) return [];
  const width = Math.max(0, ...data.map((r) => r.length));
  const keep: number[] = [];
  for (let c = 0; c < width; c++) {
    const head = data[0]?.[c];
    if (
      (head !== undefined && head !== '') ||
      data.slice(1).some((r) => filled(r[c]) || typeof r[c] === 'boolean')
    )
      keep.push(c);
  }
  return data.map((r) => keep.map((c) => r[c] ?? ''));
}

function trimLeadingEmptyRows(data: Row[], numbered: boolean): Row[] {
  const base = numbered ? 1 : 0;
  const first = data.findIndex((r) => r.slice(base).some(filled));
  const out = first === -1 ? [] : data.slice(first);
  if (numbered && out[0]) out[0][0] = ROW_NUMBER;
  return out;
}

function trimToFirstEmptyRow(data: Row[], numbered: boolean): Row[] {
  const base = numbered ? 1 : 0;
  const empty = data.findIndex((r) => r.slice(base).every((c) => c === '' || c === undefined));
  return empty === -1 ? data : data.slice(0, empty);
}

function removeEmptyRows(data: Row[], numbered: boolean): Row[] {
  const base = numbered ? 1 : 0;
  const out = data.filter((r) => r.slice(base).some((c) => filled(c) || typeof c === 'boolean'));
  if (numbered && out[0]) out[0][0] = ROW_NUMBER;
  return out;
}

/** n8n's prepareSheetData: row numbers, the header and first data row, empty rows and columns dropped. */
export function prepareSheetData(rows: Rows, o: RangeDetection, addRowNumbers = true) {
  let data: Row[] = rows.map((r) => [...r]);
  let headerRow = 0;
  let firstDataRow = 1;
  if (o.rangeDefinition === 'specifyRange') {
    headerRow = Number.parseInt(String(o.headerRow ?? 1), 10) - 1;
    firstDataRow = Number.parseInt(String(o.firstDataRow ?? 2), 10) - 1;
    if (!(headerRow >= 0) || !(firstDataRow >= 0))
      throw new NodeOperationError('The header row and first data row must be row numbers from 1 on');
  }
  if (addRowNumbers) data = addRowNumber(data, headerRow);
  if (o.rangeDefinition === 'detectAutomatically') {
    data = removeEmptyColumns(data);
    data = trimLeadingEmptyRows(data, addRowNumbers);
    data =
      o.readRowsUntil === 'firstEmptyRow'
        ? trimToFirstEmptyRow(data, addRowNumbers)
        : removeEmptyRows(data, addRowNumbers);
  }
  return { data, headerRow, firstDataRow };
}

/** The range a read asks for (n8n's getRangeString). */
export function readRange(sheetName: string, o: RangeDetection): string {
  if (o.rangeDefinition === 'specifyRangeA1') return o.range ? `${sheetName}!${o.range}` : sheetName;
  return sheetName;
}

function objects(data: Row[], startRow: number, keys: string[], addEmpty = false): Record<string, Json>[] {
  const out: Record<string, Json>[] = [];
  for (let r = startRow; r < data.length; r++) {
    const item: Record<string, Json> = {};
    const row = data[r] ?? [];
    for (let c = 0; c < row.length; c++) {
      const key = keys[c];
      if (key) item[key] = (row[c] ?? '') as Json;
    }
    if (Object.keys(item).length > 0 || addEmpty) out.push(item);
  }
  return out;
}

/** Rows as objects keyed by the header row (n8n's structureArrayDataByColumn; `col_N` for blank headers). */
export function structureByColumn(data: Row[], keyRow: number, dataStartRow: number): Record<string, Json>[] {
  if (keyRow < 0 || dataStartRow < keyRow || keyRow >= data.length) return [];
  const width = Math.max(0, ...data.map((r) => r.length));
  const keys: string[] = [];
  for (let c = 0; c < width; c++) keys.push(String(data[keyRow]?.[c] ?? '') || `col_${c}`);
  return objects(data, dataStartRow, keys);
}

export interface LookupValue {
  lookupColumn: string;
  lookupValue?: unknown;
}

/** n8n's lookupValues: rows whose column equals each filter's value (OR: any filter; AND: all). */
export function lookupRows(
  input: Row[],
  keyRow: number,
  dataStartRow: number,
  filters: LookupValue[],
  returnAllMatches: boolean,
  combine: 'AND' | 'OR',
): Record<string, Json>[] {
  if (keyRow < 0 || dataStartRow < keyRow || keyRow >= input.length)
    throw new NodeOperationError('The key row does not exist');
  const keys = (input[keyRow] ?? []).map((k, c) => String(k ?? '') || `col_${c}`);
  const data = input.map((r) => {
    const row = [...r];
    while (row.length < keys.length) row.push('');
    return row;
  });
  const columnOf = (f: LookupValue) => {
    const i = keys.indexOf(f.lookupColumn);
    if (i === -1) throw new NodeOperationError(`The column "${f.lookupColumn}" could not be found`);
    return i;
  };
  const same = (cell: Cell | undefined, value: unknown) => String(cell ?? '') === String(value ?? '');
  const picked: number[] = [];
  if (combine === 'OR') {
    for (const f of filters) {
      const c = columnOf(f);
      for (let r = dataStartRow; r < data.length; r++) {
        if (!same(data[r]?.[c], f.lookupValue)) continue;
        if (!picked.includes(r)) picked.push(r);
        if (!returnAllMatches) break;
      }
    }
  } else {
    const columns = filters.map(columnOf);
    for (let r = dataStartRow; r < data.length; r++) {
      if (!filters.every((f, i) => same(data[r]?.[columns[i] as number], f.lookupValue))) continue;
      picked.push(r);
      if (!returnAllMatches) break;
    }
  }
  const table = removeEmptyColumns([keys, ...picked.map((r) => data[r] ?? [])]);
  return objects(table, 1, (table[0] ?? []).map(String), true);
}
