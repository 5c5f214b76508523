import { pairedTo } from '../../../../engine/item-pairing.js';
import type { Item } from '../../../../engine/types.js';
import type { SheetProperties, SpreadsheetClient, ValueInputOption } from '../client.js';
import type { SheetsParams } from '../schema.js';

/** What a sheet operation works on: the spreadsheet, the sheet, the items and their parameters. */
export interface SheetOp {
  client: SpreadsheetClient;
  sheet: SheetProperties;
  items: Item[];
  params: SheetsParams[];
  version: number;
}

/** n8n's default cell format: RAW before v4.1, USER_ENTERED (as typed in Sheets' UI) from it on. */
export const cellFormatDefault = (version: number): ValueInputOption =>
  version < 4.1 ? 'RAW' : 'USER_ENTERED';

/** An output item of input item `item` (a read's rows: several, or none, per item). */
export const paired = (json: Item['json'], item: number): Item => pairedTo(json, item);

/** The first item's parameters (n8n reads the document, sheet and options from item 0). */
export const first = (op: SheetOp): SheetsParams => op.params[0] as SheetsParams;
