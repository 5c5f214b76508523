import type { Json } from '../../../engine/types.js';
import { getField, type JsonObject } from '../merge/json.js';

/**
 * n8n's Summarize logic (also Item Lists' summarize operation): aggregations per field, split by
 * fields into nested groups, then flattened into one item per group or kept as one nested item.
 */

export type AggregationType =
  | 'append'
  | 'average'
  | 'concatenate'
  | 'count'
  | 'countUnique'
  | 'max'
  | 'min'
  | 'sum';

export interface Aggregation {
  aggregation: AggregationType;
  field: string;
  includeEmpty?: boolean;
  separateBy?: string;
  customSeparator?: string;
}

export interface SummarizeOptions {
  disableDotNotation?: boolean;
  outputFormat?: 'separateItems' | 'singleItem';
  skipEmptySplitFields?: boolean;
}

const PREFIX: Record<AggregationType, string> = {
  append: 'appended_',
  average: 'average_',
  concatenate: 'concatenated_',
  count: 'count_',
  countUnique: 'unique_count_',
  max: 'max_',
  min: 'min_',
  sum: 'sum_',
};

export type Getter = (item: JsonObject, field: string) => Json | undefined;

export const valueGetter =
  (disableDotNotation?: boolean): Getter =>
  (item, field) =>
    disableDotNotation ? (Object.hasOwn(item, field) ? item[field] : undefined) : getField(item, field);

const isEmpty = (v: unknown) => v === undefined || v === null || v === '';

/** The first aggregated field no item has, if any (n8n: an error in v1, a hint from v1.1). */
export function missingField(items: JsonObject[], aggregations: Aggregation[], get: Getter): string | null {
  for (const { field } of aggregations) {
    if (field === '') continue;
    if (!items.some((item) => get(item, field) !== undefined)) return field;
  }
  return null;
}

function aggregate(items: JsonObject[], entry: Aggregation, get: Getter): Json {
  const { aggregation, field } = entry;
  let data = items;
  if (aggregation === 'average' || aggregation === 'sum')
    data = data.filter((item) => typeof get(item, field) === 'number');
  const values = () => data.map((item) => get(item, field));
  const nonEmpty = () => (entry.includeEmpty ? values() : values().filter((v) => !isEmpty(v)));
  switch (aggregation) {
    case 'append':
      return nonEmpty().map((v) => v ?? null);
    case 'concatenate': {
      const separator =
        entry.separateBy === 'other' ? (entry.customSeparator ?? '') : (entry.separateBy ?? ',');
      return nonEmpty()
        .map((v) => (v === undefined ? 'undefined' : typeof v === 'object' ? JSON.stringify(v) : String(v)))
        .join(separator);
    }
    case 'average':
    case 'sum': {
      const sum = (values() as number[]).reduce((a, b) => a + b, 0);
      return aggregation === 'sum' ? sum : data.length === 0 ? null : sum / data.length;
    }
    case 'min':
    case 'max': {
      let best: Json | undefined;
      for (const v of values()) {
        if (isEmpty(v)) continue;
        if (
          best === undefined ||
          (aggregation === 'min' ? (v as never) < (best as never) : (v as never) > (best as never))
        )
          best = v;
      }
      return best ?? null;
    }
    case 'countUnique': {
      return new Set(nonEmptyCount(entry, values())).size;
    }
    default:
      return nonEmptyCount(entry, values()).length;
  }
}

/** Count and Count Unique have no "include empty" option in n8n's Summarize: empty values never count. */
function nonEmptyCount(entry: Aggregation, values: Array<Json | undefined>) {
  return entry.includeEmpty ? values : values.filter((v) => !isEmpty(v));
}

/** n8n's output key rewriting: brackets and quotes dropped, spaces and dots become underscores. */
function cleanKey(key: string): string {
  return key.replace(/[\][" ]/g, (c) => (c === ' ' ? '_' : '')).replace(/\./g, '_');
}

function aggregateGroup(items: JsonObject[], aggregations: Aggregation[], get: Getter): JsonObject {
  const out: JsonObject = {};
  for (const entry of aggregations) {
    out[cleanKey(`${PREFIX[entry.aggregation]}${entry.field}`)] = aggregate(items, entry, get);
  }
  return out;
}

/** Nested groups (split key value → … → aggregations), keys as text in first-seen order. */
export function splitData(
  splitKeys: string[],
  items: JsonObject[],
  aggregations: Aggregation[],
  options: SummarizeOptions,
  get: Getter,
): JsonObject {
  const [key, ...rest] = splitKeys;
  if (key === undefined) return aggregateGroup(items, aggregations, get);
  const groups = new Map<string, JsonObject[]>();
  for (const item of items) {
    const raw = get(item, key);
    if (options.skipEmptySplitFields && typeof raw !== 'number' && !raw) continue;
    const name = raw !== null && typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
    const group = groups.get(name);
    if (group) group.push(item);
    else groups.set(name, [item]);
  }
  const out: JsonObject = {};
  for (const [name, group] of groups) out[name] = splitData(rest, group, aggregations, options, get);
  return out;
}

/** The nested groups as one item per group, each carrying its split field values. */
export function groupsToItems(
  nested: JsonObject,
  splitKeys: string[],
  originalTypes: boolean,
  previous: JsonObject = {},
): JsonObject[] {
  const [key, ...rest] = splitKeys.map(cleanKey);
  if (key === undefined) return [previous];
  const out: JsonObject[] = [];
  for (const [name, value] of Object.entries(nested)) {
    const keyValue: Json = originalTypes ? typed(name) : name;
    const stage = { ...previous, [key]: keyValue };
    if (rest.length === 0) out.push({ ...stage, ...(value as JsonObject) });
    else out.push(...groupsToItems(value as JsonObject, rest, false, stage));
  }
  return out;
}

const typed = (name: string): Json =>
  name === 'null' ? null : Number.isNaN(Number(name)) ? name : Number(name);
