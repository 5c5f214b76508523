import { NodeOperationError } from '../../../../engine/node-type.js';
import type { Item } from '../../../../engine/types.js';
import type { SheetsParams } from '../schema.js';
import { ROW_NUMBER } from '../table.js';

export type Row = Record<string, unknown>;

/** How the node's values are given: the resource mapper's mode from v4, `dataMode` before. */
export function dataModeOf(p: SheetsParams, version: number): string {
  return version < 4 ? (p.dataMode ?? 'defineBelow') : (p.columns?.mappingMode ?? 'defineBelow');
}

/** An item's values as mapped below (n8n's mapFields): v3's fieldsUi, v4's `columns.value`. */
export function mappedRow(p: SheetsParams, version: number): Row {
  if (version < 4) {
    const row: Row = {};
    for (const f of p.fieldsUi.fieldValues ?? []) if (f.fieldId) row[f.fieldId] = f.fieldValue;
    for (const f of p.fieldsUi.values ?? []) {
      const name = f.column === 'newColumn' ? f.columnName : f.column;
      if (name) row[name] = f.fieldValue;
    }
    return row;
  }
  const value = p.columns?.value ?? {};
  if (Object.keys(value).length === 0)
    throw new NodeOperationError("At least one value has to be added under 'Values to Send'");
  return { ...value };
}

/**
 * The items as rows to write when they are auto-mapped (n8n's autoMapInputData): keys the header lacks
 * become new columns, are ignored, or fail the node, by `handlingExtraData`.
 */
export function autoMapped(
  items: Item[],
  columns: string[],
  handling: string,
): { rows: Row[]; added: string[] } {
  const added: string[] = [];
  const rows: Row[] = [];
  items.forEach((item, itemIndex) => {
    const row: Row = { ...item.json };
    delete row[ROW_NUMBER];
    for (const key of Object.keys(row)) {
      if (columns.includes(key) || added.includes(key)) continue;
      if (handling === 'error')
        throw new NodeOperationError('Unexpected fields in node input', {
          description: `The input field '${key}' (item ${itemIndex}) doesn't match any column in the Sheet. You can ignore this by changing the 'Handling extra data' field, which you can find under 'Options'.`,
        });
      if (handling === 'insertInNewColumn') added.push(key);
    }
    rows.push(row);
  });
  return { rows, added };
}
