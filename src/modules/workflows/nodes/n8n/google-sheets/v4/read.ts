import type { Item, Json } from '../../../../engine/types.js';
import {
  type LookupValue,
  lookupRows,
  prepareSheetData,
  type RangeDetection,
  readRange,
  structureByColumn,
} from '../table.js';
import { paired, type SheetOp } from './op.js';

/** sheet → read (n8n's "Get Row(s)"): rows as objects with their row_number, or those the filters match. */
export async function readRows(op: SheetOp): Promise<Item[]> {
  // Before v4.2 n8n read once for all items; from it on once per item.
  const runs = op.version > 4.1 ? op.items.length : Math.min(1, op.items.length);
  const out: Item[] = [];
  for (let i = 0; i < runs; i++) {
    const p = op.params[i];
    if (!p) continue;
    const o = p.options;
    const location: RangeDetection = { ...(o.dataLocationOnSheet?.values ?? {}) };
    location.rangeDefinition ??= 'detectAutomatically';
    const format = o.outputFormatting?.values ?? {};
    const rows = await op.client.getData(
      readRange(op.sheet.title, location),
      format.general ?? 'UNFORMATTED_VALUE',
      format.date ?? 'FORMATTED_STRING',
    );
    if (!rows || rows.length === 0) continue;
    const { data, headerRow, firstDataRow } = prepareSheetData(rows, location);
    let filters: LookupValue[] = (p.filtersUI.values ?? []).map((f) => ({
      lookupColumn: String(f.lookupColumn),
      lookupValue: f.lookupValue ?? '',
    }));
    let found: Record<string, Json>[];
    if (filters.length > 0) {
      const returnAll =
        op.version < 4.5
          ? o.returnAllMatches === 'returnAllMatches' || o.returnAllMatches === true
          : o.returnFirstMatch !== true;
      // Up to v4.1 the filters of all items were applied together, in one read.
      if (op.version <= 4.1)
        filters = op.params.flatMap((q) =>
          (q.filtersUI.values ?? []).map((f) => ({
            lookupColumn: String(f.lookupColumn),
            lookupValue: f.lookupValue ?? '',
          })),
        );
      found = lookupRows(data, headerRow, firstDataRow, filters, returnAll, p.combineFilters);
    } else {
      found = structureByColumn(data, headerRow, firstDataRow);
    }
    for (const json of found) out.push(paired(json, i));
  }
  return out;
}
