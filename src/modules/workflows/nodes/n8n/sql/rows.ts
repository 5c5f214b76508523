import { NodeOperationError } from '../../../engine/node-type.js';
import { emptyToNull } from './parameters.js';

/** The fields of n8n's SQL nodes that say which columns get which values. */
export interface RowParams {
  dataMode?: 'autoMapInputData' | 'defineBelow' | undefined;
  valuesToSend?: { values?: Array<{ column: string; value?: unknown }> | undefined } | undefined;
  columns?:
    | {
        mappingMode?: 'autoMapInputData' | 'defineBelow' | undefined;
        value?: Record<string, unknown> | null | undefined;
        matchingColumns?: string[] | undefined;
      }
    | undefined;
  columnToMatchOn?: string | undefined;
  valueToMatchOn?: unknown;
  options: { replaceEmptyStrings?: boolean | undefined };
}

/** The item's columns and values for insert/update/upsert, by the node version's fields (v2.2: mapper). */
export function rowOf(p: RowParams, version: number, json: Record<string, unknown>): Record<string, unknown> {
  const mode = version < 2.2 ? (p.dataMode ?? 'autoMapInputData') : (p.columns?.mappingMode ?? 'defineBelow');
  if (mode === 'autoMapInputData') return emptyToNull(json, p.options.replaceEmptyStrings);
  if (version < 2.2)
    return Object.fromEntries((p.valuesToSend?.values ?? []).map((v) => [v.column, v.value ?? null]));
  return { ...(p.columns?.value ?? {}) };
}

/** Update (v2.0–2.1, Define Below): the matched column's value is `valueToMatchOn`. */
export function withMatchValue(p: RowParams, version: number, row: Record<string, unknown>) {
  if (version < 2.2 && p.dataMode === 'defineBelow' && p.columnToMatchOn)
    row[p.columnToMatchOn] = p.valueToMatchOn;
  return row;
}

export function matchColumns(p: RowParams, version: number): string[] {
  if (version < 2.2) return p.columnToMatchOn ? [p.columnToMatchOn] : [];
  return p.columns?.matchingColumns ?? [];
}

/** n8n's check against the table's columns (name → nullable); none known: the server will say. */
export function checkAgainst(row: Record<string, unknown>, columns: Map<string, boolean>): void {
  if (columns.size === 0) return;
  for (const [key, value] of Object.entries(row)) {
    if (!columns.has(key)) throw new NodeOperationError(`Column '${key}' does not exist in selected table`);
    if (value === null && columns.get(key) === false)
      throw new NodeOperationError(`Column '${key}' is not nullable`);
  }
}

/** n8n's query text: `{{ }}` pieces evaluated for the item (the parameter is not an expression). */
export async function queryText(
  query: string,
  evaluate: (source: string) => Promise<unknown>,
): Promise<string> {
  let text = query;
  for (const piece of text.match(/\{\{[\s\S]*?\}\}/g) ?? [])
    text = text.replace(piece, String(await evaluate(`=${piece}`)));
  if (text.trim() === '') throw new NodeOperationError('The query is empty');
  return text;
}
