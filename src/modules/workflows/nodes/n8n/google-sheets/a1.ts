import { NodeOperationError } from '../../../engine/node-type.js';

/** Column number (A = 1, AA = 27) as Sheets' letters. */
export function columnName(n: number): string {
  let letters = '';
  let rest = n;
  while (rest > 0) {
    const m = (rest - 1) % 26;
    letters = String.fromCharCode(65 + m) + letters;
    rest = Math.floor((rest - 1) / 26);
  }
  return letters;
}

/** Sheets' column letters as a number (A = 1); letters only, at most 3 (Sheets' last column is ZZZ). */
export function columnNumber(letters: string): number {
  const up = letters.trim().toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(up))
    throw new NodeOperationError(`'${letters.slice(0, 20)}' is not a column (A, B … ZZZ)`);
  let n = 0;
  for (const c of up) n = n * 26 + (c.charCodeAt(0) - 64);
  return n;
}

/** A column `offset` columns right of `start` (n8n's getColumnWithOffset). */
export const columnWithOffset = (start: string, offset: number) => columnName(columnNumber(start) + offset);

/** `Sheet1!A1:C` split: the sheet's name, its range's first and last cells. */
export interface DecodedRange {
  name: string;
  start: { column?: string; row?: number };
  end: { column?: string; row?: number };
}

const CELL = /^([A-Za-z]{0,3})(\d{0,7})$/;

export function decodeRange(range: string): DecodedRange {
  const bang = range.lastIndexOf('!');
  const name = bang === -1 ? range : range.slice(0, bang);
  const part = bang === -1 ? '' : range.slice(bang + 1);
  const out: DecodedRange = { name, start: {}, end: {} };
  if (!part) return out;
  const [a = '', b] = part.split(':');
  const cell = (s: string) => {
    const m = CELL.exec(s.trim());
    if (!m) throw new NodeOperationError(`The range "${part}" is not valid`);
    return {
      ...(m[1] ? { column: m[1].toUpperCase() } : {}),
      ...(m[2] ? { row: Number(m[2]) } : {}),
    };
  };
  out.start = cell(a);
  if (b !== undefined) out.end = cell(b);
  return out;
}

/**
 * A range as n8n puts it in the URL: the sheet's name encoded (and quoted when it stands alone, so a
 * name like `A1` is not read as a cell), the cells as written.
 */
export function encodeRange(range: string, bareIsSheet = true): string {
  const bang = range.lastIndexOf('!');
  if (bang !== -1)
    return `${encodeURIComponent(quoteSheet(range.slice(0, bang), false))}!${range.slice(bang + 1)}`;
  return encodeURIComponent(bareIsSheet ? quoteSheet(range, true) : range);
}

/** Sheets' A1 notation quotes a sheet name with anything but letters, digits and underscores. */
function quoteSheet(name: string, always: boolean): string {
  if (/^'.*'$/.test(name) || (!always && /^[A-Za-z0-9_]+$/.test(name))) return name;
  return `'${name.replace(/'/g, "''")}'`;
}
