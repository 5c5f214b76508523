import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item } from '../../../../engine/types.js';
import { columnNumber } from '../a1.js';
import { paired, type SheetOp } from './op.js';

/** sheet → delete: rows (from a row number) or columns (from a letter), per item; `{success: true}`. */
export async function deleteDimension(op: SheetOp): Promise<Item[]> {
  for (const p of op.params) {
    const rows = p.toDelete !== 'columns';
    if (typeof p.toDelete === 'object') throw new NodeOperationError("v4's toDelete is 'rows' or 'columns'");
    let startIndex: number;
    if (rows) {
      startIndex = Number(p.startIndex ?? 2) - 1;
      if (!Number.isInteger(startIndex) || startIndex < 0)
        throw new NodeOperationError('The start row must be a row number from 1 on');
    } else {
      startIndex = columnNumber(String(p.startIndex ?? 'A')) - 1;
    }
    await op.client.spreadsheetBatchUpdate([
      {
        deleteDimension: {
          range: {
            sheetId: op.sheet.sheetId,
            dimension: rows ? 'ROWS' : 'COLUMNS',
            startIndex,
            endIndex: startIndex + p.numberToDelete,
          },
        },
      },
    ]);
  }
  return op.items.map((_, i) => paired({ success: true }, i));
}
