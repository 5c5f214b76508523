import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item } from '../../../../engine/types.js';
import { columnName, columnNumber } from '../a1.js';
import type { SheetOp } from './op.js';

/** sheet → clear: the whole sheet, rows, columns or a range (its values only), per item. */
export async function clearSheet(op: SheetOp): Promise<Item[]> {
  const title = op.sheet.title;
  for (const p of op.params) {
    let range = title;
    if (p.clear === 'specificRows') {
      const start = Number(p.startIndex ?? 1);
      if (!Number.isInteger(start) || start < 1)
        throw new NodeOperationError('The start row must be a row number from 1 on');
      range = `${title}!${start}:${start + p.rowsToDelete - 1}`;
    } else if (p.clear === 'specificColumns') {
      const start = String(p.startIndex ?? 'A');
      range = `${title}!${start.toUpperCase()}:${columnName(columnNumber(start) + p.columnsToDelete - 1)}`;
    } else if (p.clear === 'specificRange') {
      const given = p.range ?? '';
      const region = given.includes('!') ? (given.split('!')[1] ?? '') : given;
      if (!region) throw new NodeOperationError('The range to clear is not set (e.g. A1:B2)');
      range = `${title}!${region}`;
    }
    if (p.keepFirstRow) {
      const firstRow = await op.client.getData(`${title}!1:1`, 'FORMATTED_VALUE');
      await op.client.clear(range);
      if (firstRow && firstRow.length > 0) await op.client.updateRows(title, firstRow, 'RAW', 1);
    } else {
      await op.client.clear(range);
    }
  }
  return op.items.map((item, i) => ({ ...item, pairedItem: { item: i } }));
}
