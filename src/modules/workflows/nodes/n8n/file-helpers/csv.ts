import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { FILE_LIMITS } from './limits.js';

export interface CsvReadOptions {
  delimiter?: string;
  headerRow?: boolean;
  fromLine?: number;
  maxRowCount?: number;
  relaxQuotes?: boolean;
  includeEmptyCells?: boolean;
}

/** A CSV file's rows: objects keyed by the header row (n8n's default) or arrays; every value text. */
export function readCsv(text: string, o: CsvReadOptions): Array<Record<string, Json>> {
  const limit = o.maxRowCount !== undefined && o.maxRowCount >= 0 ? o.maxRowCount : FILE_LIMITS.rows;
  let rows: unknown[];
  try {
    rows = parse(text, {
      delimiter: o.delimiter || ',',
      columns: o.headerRow !== false,
      from_line: o.fromLine && o.fromLine > 0 ? o.fromLine : 1,
      to: Math.min(limit, FILE_LIMITS.rows) + 1,
      relax_quotes: o.relaxQuotes ?? false,
      relax_column_count: true,
      skip_empty_lines: true,
      bom: true,
    }) as unknown[];
  } catch (error) {
    throw new NodeOperationError('The CSV file could not be read', { description: (error as Error).message });
  }
  if (rows.length > Math.min(limit, FILE_LIMITS.rows)) {
    if (limit < FILE_LIMITS.rows) rows = rows.slice(0, limit);
    else throw new NodeOperationError(`The CSV file has more than ${FILE_LIMITS.rows} rows`);
  }
  return rows.map((row) =>
    Array.isArray(row) ? { row: row as Json[] } : dropEmpty(row as Record<string, Json>, o.includeEmptyCells),
  );
}

function dropEmpty(row: Record<string, Json>, keep?: boolean): Record<string, Json> {
  if (keep) return row;
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== ''));
}

/** The header: every key of every row, in order of first appearance. */
export function headerOf(rows: Array<Record<string, Json>>): string[] {
  return [...new Set(rows.flatMap((r) => Object.keys(r)))];
}

/** A cell's text as a spreadsheet holds it: objects as JSON. */
export function cellText(value: Json | undefined): string | number | boolean | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

export function writeCsv(
  rows: Array<Record<string, Json>>,
  o: { delimiter?: string; headerRow?: boolean },
): string {
  const header = headerOf(rows);
  const body = rows.map((r) => header.map((h) => cellText(r[h])));
  return stringify(o.headerRow === false ? body : [header, ...body], {
    delimiter: o.delimiter || ',',
    cast: { boolean: (b) => (b ? 'TRUE' : 'FALSE') },
  }).replace(/\n$/, '');
}
