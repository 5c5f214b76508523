import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item, Json } from '../../../../engine/types.js';
import type { SpreadsheetClient } from '../client.js';
import type { SheetsParams } from '../schema.js';
import { DRIVE_BASE, type GoogleTarget, googleCall, SHEETS_BASE } from '../transport.js';
import { paired } from './op.js';

/** Sheets' colour object from `#rrggbb` (n8n's hexToRgb, as 0–1 fractions). */
function tabColorOf(hex: string) {
  const m = /^#?([a-f\d]{2})([a-f\d]{2})([a-f\d]{2})$/i.exec(hex.trim());
  if (!m) throw new NodeOperationError(`'${hex.slice(0, 20)}' is not a colour (#rrggbb)`);
  const part = (s: string | undefined) => Number.parseInt(s ?? '0', 16) / 255;
  return { red: part(m[1]), green: part(m[2]), blue: part(m[3]) };
}

/** sheet → create: a sheet (tab) added to the spreadsheet per item; its properties. */
export async function createSheets(client: SpreadsheetClient, params: SheetsParams[]): Promise<Item[]> {
  const out: Item[] = [];
  for (const [i, p] of params.entries()) {
    const o = p.options;
    const properties: Record<string, unknown> = { title: p.title || 'n8n-sheet' };
    if (o.hidden !== undefined) properties.hidden = o.hidden;
    if (o.rightToLeft !== undefined) properties.rightToLeft = o.rightToLeft;
    if (o.sheetId !== undefined && o.sheetId !== '') properties.sheetId = Number(o.sheetId);
    if (o.index !== undefined) properties.index = o.index;
    if (o.tabColor) properties.tabColor = tabColorOf(o.tabColor);
    const res = await client.spreadsheetBatchUpdate([{ addSheet: { properties } }]);
    const replies = Array.isArray(res.replies) ? res.replies : [];
    const added = (replies[0] as { addSheet?: { properties?: Record<string, Json> } } | undefined)?.addSheet
      ?.properties;
    out.push(paired(added ?? {}, i));
  }
  return out;
}

/** sheet → remove: the sheet deleted per item, as n8n does (a second item finds it gone and fails). */
export async function removeSheet(
  client: SpreadsheetClient,
  sheetId: number,
  items: number,
): Promise<Item[]> {
  const out: Item[] = [];
  for (let i = 0; i < items; i++) {
    const res = await client.spreadsheetBatchUpdate([{ deleteSheet: { sheetId } }]);
    delete res.replies;
    out.push(paired(res as Record<string, Json>, i));
  }
  return out;
}

/** spreadsheet → create: a new spreadsheet with its sheets; Google's answer. */
export async function createSpreadsheets(target: GoogleTarget, params: SheetsParams[]): Promise<Item[]> {
  const out: Item[] = [];
  for (const [i, p] of params.entries()) {
    const properties: Record<string, unknown> = { title: p.title ?? '' };
    if (p.options.locale) properties.locale = p.options.locale;
    if (p.options.autoRecalc) properties.autoRecalc = p.options.autoRecalc;
    const sheets = (p.sheetsUi.sheetValues ?? []).map((s) => ({
      properties: {
        title: s.title ?? s.propertiesUi?.title,
        hidden: s.hidden ?? s.propertiesUi?.hidden ?? false,
      },
    }));
    const res = await googleCall(target, {
      method: 'POST',
      url: `${SHEETS_BASE}/v4/spreadsheets`,
      body: { properties, ...(sheets.length > 0 ? { sheets } : {}) },
      what: 'creating a spreadsheet',
    });
    out.push(paired(res as Record<string, Json>, i));
  }
  return out;
}

/** spreadsheet → deleteSpreadsheet: the file deleted through Drive; `{success: true}` per item. */
export async function deleteSpreadsheets(target: GoogleTarget, ids: string[]): Promise<Item[]> {
  const out: Item[] = [];
  for (const [i, id] of ids.entries()) {
    await googleCall(target, {
      method: 'DELETE',
      url: `${DRIVE_BASE}/drive/v3/files/${encodeURIComponent(id)}`,
      query: { supportsAllDrives: 'true' },
      what: `deleting spreadsheet ${id}`,
    });
    out.push(paired({ success: true }, i));
  }
  return out;
}
