import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { columnWithOffset, decodeRange } from './a1.js';
import { type Cell, cellOf, type Rows, type SpreadsheetClient } from './client.js';
import type { SheetsParams } from './schema.js';
import { lookupRows, structureByColumn } from './table.js';
import { paired } from './v4/op.js';

/** v1's table range when none is given (n8n's default). */
const DEFAULT_RANGE = 'A:F';

const pathValue = (item: Record<string, unknown>, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      item,
    );

/** The header row of a v1 range (its keyRow), the columns it spans. */
async function headerOf(client: SpreadsheetClient, range: string, keyRow: number): Promise<string[]> {
  const d = decodeRange(range.includes('!') ? range : `!${range}`);
  const cells = `${d.start.column ?? 'A'}${keyRow + 1}:${d.end.column ?? d.start.column ?? 'ZZ'}${keyRow + 1}`;
  const rows = await client.getData(range.includes('!') ? `${d.name}!${cells}` : cells, 'UNFORMATTED_VALUE');
  const header = rows?.[0];
  if (!header || header.length === 0)
    throw new NodeOperationError(`Could not retrieve the column names from row ${keyRow + 1}`);
  return header.map(String);
}

function rowOf(item: Record<string, unknown>, header: string[], usePath: boolean): Cell[] {
  return header.map((k) => cellOf(usePath ? pathValue(item, k) : item[k]) as Cell);
}

/**
 * n8n's Google Sheets v1 and v2 (`sheetId` + `range`, `keyRow`/`dataStartRow` as 0-based indexes):
 * read, append, lookup, update, upsert, clear and delete.
 */
export async function runV1(
  client: SpreadsheetClient,
  operation: string,
  items: Item[],
  params: SheetsParams[],
): Promise<Item[]> {
  const p = params[0] as SheetsParams;
  const range = p.range || DEFAULT_RANGE;
  const o = p.options;
  const input = o.valueInputMode ?? 'RAW';
  const render = o.valueRenderMode ?? 'UNFORMATTED_VALUE';
  const passThrough = () => items.map((item, i) => ({ ...item, pairedItem: { item: i } }));

  if (operation === 'read') {
    const rows = await client.getData(range, render);
    if (!rows || rows.length === 0) return [];
    if (p.rawData) return [paired({ [p.dataProperty]: rows as Json }, 0)];
    return structureByColumn(rows, p.keyRow, p.dataStartRow).map((json) => paired(json, 0));
  }
  if (operation === 'lookup') {
    const rows = (await client.getData(range, render)) ?? [];
    const filters = params.map((q) => ({
      lookupColumn: q.lookupColumn ?? '',
      lookupValue: q.lookupValue ?? '',
    }));
    const all = o.returnAllMatches === true;
    const found = rows.length === 0 ? [] : lookupRows(rows, p.keyRow, p.dataStartRow, filters, all, 'OR');
    if (found.length === 0 && o.continue) return [paired({}, 0)];
    return found.map((json) => paired(json, 0));
  }
  if (operation === 'append') {
    const header = await headerOf(client, range, p.keyRow);
    await client.append(
      range,
      items.map((item) => rowOf(item.json, header, o.usePathForKeyRow === true)),
      input,
    );
    return passThrough();
  }
  if (operation === 'update' || operation === 'upsert') {
    if (p.rawData) {
      const data = items.map((item, i) => {
        const values = item.json[(params[i] ?? p).dataProperty];
        if (!Array.isArray(values))
          throw new NodeOperationError(`Item ${i} has no rows (an array of arrays) in '${p.dataProperty}'`);
        return { range, values: values as Rows };
      });
      await client.batchUpdate(data, input);
      return passThrough();
    }
    const header = await headerOf(client, range, p.keyRow);
    const keyIndex = header.indexOf(p.key);
    if (keyIndex === -1 && operation === 'update')
      throw new NodeOperationError(`Could not find column for key "${p.key}"`);
    const d = decodeRange(range.includes('!') ? range : `!${range}`);
    const sheet = range.includes('!') ? `${d.name}!` : '';
    const startColumn = d.start.column ?? 'A';
    const keyColumn = columnWithOffset(startColumn, Math.max(keyIndex, 0));
    const keyValues =
      keyIndex === -1
        ? []
        : (
            (await client.getData(`${sheet}${keyColumn}${p.dataStartRow + 1}:${keyColumn}`, render)) ?? []
          ).map((r) => r[0]);
    const updates: Array<{ range: string; values: Rows }> = [];
    const appends: Cell[][] = [];
    for (const item of items) {
      const key = item.json[p.key];
      const at =
        key === undefined || key === null ? -1 : keyValues.findIndex((v) => String(v ?? '') === String(key));
      if (at === -1) {
        if (operation === 'upsert') appends.push(rowOf(item.json, header, o.usePathForKeyRow === true));
        continue;
      }
      for (const [c, name] of header.entries()) {
        const v = item.json[name];
        if (name === p.key || v === undefined || v === null) continue;
        updates.push({
          range: `${sheet}${columnWithOffset(startColumn, c)}${at + p.dataStartRow + 1}`,
          values: [[cellOf(v) as Cell]],
        });
      }
    }
    await client.batchUpdate(updates, input);
    if (appends.length > 0) await client.append(range, appends, input);
    return passThrough();
  }
  if (operation === 'clear') {
    await client.clear(range);
    return passThrough();
  }
  if (operation === 'delete') {
    const requests: Record<string, unknown>[] = [];
    const spec = typeof p.toDelete === 'object' ? p.toDelete : {};
    for (const [dimension, list] of [
      ['COLUMNS', spec.columns],
      ['ROWS', spec.rows],
    ] as const)
      for (const d of list ?? []) {
        const startIndex = d.startIndex ?? 0;
        requests.push({
          deleteDimension: {
            range: {
              sheetId: Number(d.sheetId ?? 0),
              dimension,
              startIndex,
              endIndex: startIndex + (d.amount ?? 1),
            },
          },
        });
      }
    if (requests.length === 0)
      throw new NodeOperationError('Nothing to delete: add rows or columns under "To Delete"');
    await client.spreadsheetBatchUpdate(requests);
    return passThrough();
  }
  throw new NodeOperationError(
    `The operation '${operation}' is not served for Google Sheets v1 and v2 here`,
    {
      description: 'Served: read, append, lookup, update, upsert, clear, delete; and spreadsheet → create',
    },
  );
}
