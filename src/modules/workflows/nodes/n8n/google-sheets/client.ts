import { NodeOperationError } from '../../../engine/node-type.js';
import { columnWithOffset, decodeRange, encodeRange } from './a1.js';
import { type GoogleTarget, googleCall, SHEETS_BASE } from './transport.js';

/** A cell as the Values API carries it. */
export type Cell = string | number | boolean;
export type Rows = Cell[][];

/**
 * Most cells one read may bring (rows × columns of the answer): past it the node fails, naming the
 * bound, rather than hold a sheet of any size in memory.
 */
export const MAX_CELLS = 500_000;
/** Most rows one run writes (appended or updated): Google's own request limit is 10 MB. */
export const MAX_WRITE_ROWS = 50_000;

export type ValueInputOption = 'RAW' | 'USER_ENTERED';

export interface SheetProperties {
  sheetId: number;
  title: string;
  index?: number;
  gridProperties?: { rowCount?: number; columnCount?: number };
}

/** One spreadsheet (n8n's GoogleSheet helper): the Values and Spreadsheets calls the operations make. */
export class SpreadsheetClient {
  constructor(
    readonly target: GoogleTarget,
    readonly id: string,
    /** v1 ranges without a sheet (`A:C`) are cells of the first sheet; v4 names only sheets. */
    readonly bareIsSheet = true,
  ) {}

  private url(path: string): string {
    return `${SHEETS_BASE}/v4/spreadsheets/${encodeURIComponent(this.id)}${path}`;
  }

  /** The sheets of the spreadsheet (spreadsheets.get, properties only). */
  async sheets(): Promise<SheetProperties[]> {
    const res = await googleCall(this.target, {
      method: 'GET',
      url: this.url(''),
      query: { fields: 'sheets.properties' },
      what: `reading spreadsheet ${this.id}`,
    });
    const sheets = Array.isArray(res.sheets) ? res.sheets : [];
    return sheets
      .map((s) => (s as { properties?: SheetProperties }).properties)
      .filter((p): p is SheetProperties => !!p && typeof p.title === 'string');
  }

  /** values.get: the cells of `range`, bounded by MAX_CELLS. */
  async getData(range: string, valueRenderOption: string, dateTimeRenderOption = 'FORMATTED_STRING') {
    const res = await googleCall(this.target, {
      method: 'GET',
      url: this.url(`/values/${encodeRange(range, this.bareIsSheet)}`),
      query: { valueRenderOption, dateTimeRenderOption },
      what: `reading '${range}'`,
    });
    const values = Array.isArray(res.values) ? (res.values as unknown[]) : undefined;
    if (!values) return undefined;
    let cells = 0;
    for (const row of values) cells += Array.isArray(row) ? Math.max(row.length, 1) : 1;
    if (cells > MAX_CELLS)
      throw new NodeOperationError(
        `'${range}' holds more than ${MAX_CELLS} cells, more than one read may bring`,
        {
          description: 'Read a smaller range (Options → Data Location on Sheet → Range)',
        },
      );
    return values.map((row) => (Array.isArray(row) ? (row as Cell[]) : [])) as Rows;
  }

  /** values.update (PUT) of whole rows from `row` on, or values.append when `useAppend`. */
  async updateRows(sheetName: string, data: Rows, input: ValueInputOption, row: number, useAppend = false) {
    const name = decodeRange(sheetName).name;
    const range = `${name}!${row}:${row + Math.max(data.length, 1) - 1}`;
    if (data.length > MAX_WRITE_ROWS)
      throw new NodeOperationError(
        `One run writes at most ${MAX_WRITE_ROWS} rows; this one has ${data.length}`,
      );
    return googleCall(this.target, {
      method: useAppend ? 'POST' : 'PUT',
      url: this.url(`/values/${encodeRange(range, this.bareIsSheet)}${useAppend ? ':append' : ''}`),
      query: { valueInputOption: input },
      body: { range, values: data },
      what: `writing '${range}'`,
    });
  }

  /** values.append: rows after the table Google finds in `range` (v1's append). */
  async append(range: string, data: Rows, input: ValueInputOption) {
    if (data.length > MAX_WRITE_ROWS)
      throw new NodeOperationError(
        `One run writes at most ${MAX_WRITE_ROWS} rows; this one has ${data.length}`,
      );
    return googleCall(this.target, {
      method: 'POST',
      url: this.url(`/values/${encodeRange(range, this.bareIsSheet)}:append`),
      query: { valueInputOption: input },
      body: { range, values: data },
      what: `appending to '${range}'`,
    });
  }

  /** values.batchUpdate: single cells by A1 range. */
  async batchUpdate(data: Array<{ range: string; values: Rows }>, input: ValueInputOption) {
    if (data.length === 0) return {};
    return googleCall(this.target, {
      method: 'POST',
      url: this.url('/values:batchUpdate'),
      body: { data, valueInputOption: input },
      what: 'updating cells',
    });
  }

  /** values.clear */
  async clear(range: string) {
    return googleCall(this.target, {
      method: 'POST',
      url: this.url(`/values/${encodeRange(range, this.bareIsSheet)}:clear`),
      body: { spreadsheetId: this.id, range },
      what: `clearing '${range}'`,
    });
  }

  /** spreadsheets.batchUpdate (add/delete sheets, delete rows and columns). */
  async spreadsheetBatchUpdate(requests: Record<string, unknown>[]) {
    return googleCall(this.target, {
      method: 'POST',
      url: `${SHEETS_BASE}/v4/spreadsheets/${encodeURIComponent(this.id)}:batchUpdate`,
      body: { requests },
      what: `changing spreadsheet ${this.id}`,
    });
  }
}

/** A JSON value as a cell: objects as their JSON text (n8n stringifies them). */
export function cellOf(value: unknown, empty: Cell | null = ''): Cell | null {
  if (value === undefined || value === null) return empty;
  if (typeof value === 'object') return JSON.stringify(value);
  return value as Cell;
}

export { columnWithOffset };
