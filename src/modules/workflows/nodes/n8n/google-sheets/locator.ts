import { NodeOperationError } from '../../../engine/node-type.js';
import type { SheetProperties, SpreadsheetClient } from './client.js';
import type { LocatorValue } from './schema.js';

const DRIVE_URL = /https:\/\/(?:drive|docs)\.google\.com(?:\/.*|)\/d\/([0-9a-zA-Z\-_]+)(?:\/.*|)/;
const LONG_ID = /([-\w]{25,})/;

const modeOf = (l: LocatorValue | undefined) =>
  typeof l === 'object' && l !== null ? (l.mode ?? 'id') : 'id';
const locatorText = (l: LocatorValue | undefined) =>
  String((typeof l === 'object' && l !== null ? l.value : l) ?? '').trim();

/** The spreadsheet's id from n8n's document locator: an id, a list pick, or its URL (as n8n parses it). */
export function spreadsheetIdOf(l: LocatorValue | undefined, what = 'Document'): string {
  const value = locatorText(l);
  if (!value) throw new NodeOperationError(`The ${what} is not set: give the spreadsheet's id or URL`);
  if (modeOf(l) === 'url' || /^https?:\/\//.test(value)) {
    const id = DRIVE_URL.exec(value)?.[1] ?? LONG_ID.exec(value)?.[1];
    if (!id) throw new NodeOperationError(`'${value.slice(0, 200)}' is not the URL of a Google spreadsheet`);
    return id;
  }
  return value;
}

/** A sheet's id from a locator value: `gid=N`, a sheet URL's `#gid=N`, or the number itself. */
export function sheetIdOf(value: string): number | null {
  const gid = /gid=(\d+)/.exec(value)?.[1];
  if (gid !== undefined) return Number(gid);
  return /^\d+$/.test(value) ? Number(value) : null;
}

/** The sheet n8n's sheet locator names (mode name: its title; list, id, url: its id). */
export async function resolveSheet(
  client: SpreadsheetClient,
  l: LocatorValue | undefined,
): Promise<SheetProperties> {
  const value = locatorText(l);
  if (!value) throw new NodeOperationError('The Sheet is not set: give its name, id or URL');
  const byName = modeOf(l) === 'name';
  const id = byName ? null : sheetIdOf(value);
  if (!byName && id === null)
    throw new NodeOperationError(`'${value.slice(0, 200)}' is not a sheet id (a number, or gid=N)`);
  const sheets = await client.sheets();
  const found = sheets.find((s) => (byName ? s.title === value : s.sheetId === id));
  if (!found)
    throw new NodeOperationError(`Sheet with ${byName ? 'name' : 'ID'} ${value} not found`, {
      description: `The spreadsheet ${client.id} has ${sheets.map((s) => `'${s.title}'`).join(', ') || 'no sheets'}`,
    });
  return found;
}
