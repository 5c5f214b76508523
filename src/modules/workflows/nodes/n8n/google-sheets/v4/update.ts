import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item, Json } from '../../../../engine/types.js';
import { columnName } from '../a1.js';
import { type Cell, cellOf, MAX_WRITE_ROWS, type Rows } from '../client.js';
import { ROW_NUMBER } from '../table.js';
import { autoMapped, dataModeOf, mappedRow, type Row } from './mapping.js';
import { cellFormatDefault, first, paired, type SheetOp } from './op.js';

/**
 * sheet → update and appendOrUpdate (`upsert`): the rows whose match column holds an item's value get
 * the item's other values, cell by cell in one values.batchUpdate; with `upsert`, items no row matches
 * are appended after the sheet's last row.
 */
export async function updateRows(op: SheetOp, upsert: boolean): Promise<Item[]> {
  const p = first(op);
  const o = p.options;
  const input = o.cellFormat ?? cellFormatDefault(op.version);
  const keyRowIndex = Number(o.locationDefine?.values?.headerRow ?? 1) - 1;
  const dataStartRowIndex = Number(o.locationDefine?.values?.firstDataRow ?? keyRowIndex + 2) - 1;
  const title = op.sheet.title;
  if (op.items.length > MAX_WRITE_ROWS)
    throw new NodeOperationError(
      `One run updates at most ${MAX_WRITE_ROWS} rows; it was given ${op.items.length}`,
    );

  const sheetData = (await op.client.getData(title, 'FORMATTED_VALUE')) ?? [];
  if (sheetData[keyRowIndex] === undefined && !upsert)
    throw new NodeOperationError(`Could not retrieve the column names from row ${keyRowIndex + 1}`);
  let columns = (sheetData[keyRowIndex] ?? []).map((c) => String(c));
  const matchOn = op.version < 4 ? p.columnToMatchOn : p.columns?.matchingColumns?.[0];
  if (!matchOn) throw new NodeOperationError("The 'Column to Match On' parameter is required");
  const mode = dataModeOf(p, op.version);
  const keyIndex = columns.indexOf(matchOn);
  const keyValues = keyIndex === -1 ? [] : sheetData.slice(dataStartRowIndex).map((r) => r[keyIndex]);

  const updates: Array<{ range: string; values: Rows }> = [];
  const appends: Row[] = [];
  const mapped: Row[] = [];
  for (let i = 0; i < op.items.length; i++) {
    if (mode === 'nothing') continue;
    const q = op.params[i];
    if (!q) continue;
    let row: Row;
    let added: string[] = [];
    if (mode === 'autoMapInputData') {
      ({
        rows: [row = {}],
        added,
      } = autoMapped([op.items[i] as Item], columns, o.handlingExtraData ?? 'insertInNewColumn'));
      const fromItem = (op.items[i] as Item).json[ROW_NUMBER];
      if (matchOn === ROW_NUMBER && fromItem !== undefined) row[ROW_NUMBER] = fromItem;
    } else {
      const value = op.version < 4 ? q.valueToMatchOn : q.columns?.value?.[matchOn];
      if (value === undefined || value === '')
        throw new NodeOperationError("The 'Column to Match On' parameter is required", {
          description: `Item ${i} gives no value for '${matchOn}'`,
        });
      row = mappedRow(q, op.version);
      if (op.version < 4) row[matchOn] = value;
      for (const [k, v] of Object.entries(row)) if (v === undefined || v === null) row[k] = '';
      added = Object.keys(row).filter((k) => k !== ROW_NUMBER && !columns.includes(k));
      mapped.push(row);
    }
    if (added.length > 0) {
      columns = [...columns, ...added];
      await op.client.updateRows(title, [columns], input, keyRowIndex + 1);
    }
    let target: number;
    if (matchOn === ROW_NUMBER) {
      target = Number(row[ROW_NUMBER]);
      if (!Number.isInteger(target) || target < 1)
        throw new NodeOperationError('row_number is null or undefined', {
          description: "Since it's being used to determine the row to update, it must be a row number",
        });
    } else {
      const key = row[matchOn];
      if (key === undefined || key === null) {
        if (upsert) appends.push(row);
        continue;
      }
      const at = keyValues.findIndex((v) => v !== undefined && String(v) === String(key));
      if (at === -1) {
        if (upsert) appends.push(row);
        continue;
      }
      target = at + dataStartRowIndex + 1;
    }
    for (const [c, name] of columns.entries()) {
      if (name === matchOn || name === ROW_NUMBER) continue;
      const v = row[name];
      if (v === undefined || v === null) continue;
      updates.push({ range: `${title}!${columnName(c + 1)}${target}`, values: [[cellOf(v) as Cell]] });
    }
  }
  await op.client.batchUpdate(updates, input);
  if (appends.length > 0) {
    const values = appends.map((r) => columns.map((c) => cellOf(r[c]) as Cell));
    await op.client.updateRows(
      title,
      values,
      input,
      Math.max(sheetData.length, keyRowIndex + 1) + 1,
      o.useAppend === true,
    );
  }

  if (op.version < 4 || mode === 'autoMapInputData')
    return op.items.map((item, i) => ({ ...item, pairedItem: { item: i } }));
  if (!upsert && updates.length === 0) return [];
  return mapped.map((r, i) => paired(r as Record<string, Json>, i));
}
