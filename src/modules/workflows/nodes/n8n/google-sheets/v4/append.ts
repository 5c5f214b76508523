import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item, Json } from '../../../../engine/types.js';
import { cellOf, MAX_WRITE_ROWS } from '../client.js';
import { autoMapped, dataModeOf, mappedRow, type Row } from './mapping.js';
import { cellFormatDefault, first, paired, type SheetOp } from './op.js';

/** sheet → append: each item a row after the sheet's last row, its values under the header's columns. */
export async function appendRows(op: SheetOp): Promise<Item[]> {
  const p = first(op);
  const mode = dataModeOf(p, op.version);
  if (op.items.length === 0 || mode === 'nothing') return [];
  if (op.items.length > MAX_WRITE_ROWS)
    throw new NodeOperationError(
      `One run appends at most ${MAX_WRITE_ROWS} rows; it was given ${op.items.length}`,
    );
  const o = p.options;
  const input = o.cellFormat ?? cellFormatDefault(op.version);
  const headerRow = Number(o.locationDefine?.values?.headerRow ?? 1);
  const title = op.sheet.title;
  const sheetData = (await op.client.getData(title, 'FORMATTED_VALUE')) ?? [];
  let columns = (sheetData[headerRow - 1] ?? []).map((c) => String(c));

  let rows: Row[];
  let added: string[];
  if (mode === 'autoMapInputData') {
    ({ rows, added } = autoMapped(op.items, columns, o.handlingExtraData ?? 'insertInNewColumn'));
  } else {
    rows = op.params.map((q) => mappedRow(q, op.version));
    // Columns the mapping names that the sheet lacks (a new sheet has no header yet) are added.
    added = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => !columns.includes(k));
  }
  if (added.length > 0) {
    columns = [...columns, ...added];
    await op.client.updateRows(title, [columns], input, headerRow);
  }
  const useAppend = o.useAppend === true;
  const values = rows.map((r) => columns.map((c) => cellOf(r[c], useAppend ? null : '') as string));
  const lastRow = Math.max(sheetData.length, headerRow) + 1;
  await op.client.updateRows(title, values, input, lastRow, useAppend);

  if (op.version < 4 || mode === 'autoMapInputData')
    return op.items.map((item, i) => ({ ...item, pairedItem: { item: i } }));
  return rows.map((r, i) => paired(r as Record<string, Json>, i));
}
