import { AppError } from '../errors.js';

type FilterType = 'string' | 'boolean' | 'integer' | readonly string[];

/** What a collection allows: the shared list parameters are checked against it. */
export interface ListSpec {
  /** API field → database column, for every sortable or filterable field. */
  columns: Record<string, string>;
  sortable: readonly string[];
  /** Sortable fields that may be null: they sort after every value, in either order. */
  nullable?: readonly string[];
  filters: Record<string, FilterType>;
  /** Fields `fields=` may name (`id` is always kept). */
  projectable: readonly string[];
  defaultSort: string;
  defaultOrder: 'asc' | 'desc';
  defaultLimit: number;
  maxLimit: number;
}

export interface Cursor {
  sort: string;
  order: 'asc' | 'desc';
  value: string | number | null;
  id: string;
}

export interface ListQuery {
  limit: number;
  offset: number;
  sort: string;
  order: 'asc' | 'desc';
  fields: string[] | null;
  filters: Record<string, string | number>;
  cursor: Cursor | null;
}

/** Deeper pages are what cursors are for; the bound keeps the value a 32-bit integer on every database. */
export const MAX_OFFSET = 2_147_483_647;

const RESERVED = new Set(['limit', 'offset', 'sort', 'order', 'fields', 'cursor']);

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.sort, cursor.order, cursor.value, cursor.id])).toString(
    'base64url',
  );
}

function decodeCursor(raw: string): Cursor | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 4) return null;
    const [sort, order, value, id] = parsed as unknown[];
    if (typeof sort !== 'string' || (order !== 'asc' && order !== 'desc') || typeof id !== 'string')
      return null;
    if (value !== null && typeof value !== 'string' && typeof value !== 'number') return null;
    // A forged cursor may carry a NUL, which PostgreSQL refuses in text (a 500 there, not a 400):
    // no stored value holds one, so such a cursor was made by no page.
    if (sort.includes('\u0000') || id.includes('\u0000')) return null;
    if (typeof value === 'string' && value.includes('\u0000')) return null;
    return { sort, order, value, id };
  } catch {
    return null;
  }
}

/** Validates the shared list parameters; every problem is named in one 400. */
export function parseListQuery(query: Record<string, unknown>, spec: ListSpec): ListQuery {
  const problems: Array<{ field: string; message: string }> = [];
  const limit = typeof query.limit === 'number' ? query.limit : spec.defaultLimit;
  if (limit > spec.maxLimit) problems.push({ field: 'limit', message: `must be at most ${spec.maxLimit}` });
  if (typeof query.offset === 'number' && query.offset > MAX_OFFSET)
    problems.push({ field: 'offset', message: `must be at most ${MAX_OFFSET}` });
  const sort = typeof query.sort === 'string' ? query.sort : spec.defaultSort;
  if (!spec.sortable.includes(sort)) {
    problems.push({
      field: 'sort',
      message: `cannot sort by '${sort}'; allowed: ${spec.sortable.join(', ')}`,
    });
  }
  const order = query.order === 'asc' || query.order === 'desc' ? query.order : spec.defaultOrder;
  let fields: string[] | null = null;
  if (typeof query.fields === 'string' && query.fields.trim() !== '') {
    fields = query.fields.split(',').map((f) => f.trim());
    const unknown = fields.filter((f) => !spec.projectable.includes(f));
    if (unknown.length > 0)
      problems.push({ field: 'fields', message: `unknown fields: ${unknown.join(', ')}` });
    if (!fields.includes('id')) fields.unshift('id');
  }
  const filters: Record<string, string | number> = {};
  for (const [name, raw] of Object.entries(query)) {
    if (RESERVED.has(name)) continue;
    const type = spec.filters[name];
    if (type === undefined) {
      problems.push({ field: name, message: `unknown filter field '${name}'` });
      continue;
    }
    const value = String(raw);
    const converted = convertFilter(type, value);
    if (converted === undefined) problems.push({ field: name, message: describeFilter(type) });
    else filters[name] = converted;
  }
  let cursor: Cursor | null = null;
  if (typeof query.cursor === 'string') {
    cursor = decodeCursor(query.cursor);
    if (!cursor) problems.push({ field: 'cursor', message: 'is not a valid cursor' });
    else if (cursor.sort !== sort || cursor.order !== order) {
      problems.push({ field: 'cursor', message: 'was made for another sort or order' });
    }
  }
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid list parameters', { fields: problems });
  const offset = cursor ? 0 : typeof query.offset === 'number' ? query.offset : 0;
  return { limit, offset, sort, order, fields, filters, cursor };
}

function convertFilter(type: FilterType, value: string): string | number | undefined {
  if (Array.isArray(type)) return type.includes(value) ? value : undefined;
  switch (type) {
    case 'string':
      return value;
    case 'boolean':
      return value === 'true' ? 1 : value === 'false' ? 0 : undefined;
    case 'integer': {
      // 32-bit, as the columns are on PostgreSQL: a wider value would be the database's error (a 500).
      const n = /^-?\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
      return n >= -2_147_483_648 && n <= 2_147_483_647 ? n : undefined;
    }
    default:
      return undefined;
  }
}

function describeFilter(type: FilterType): string {
  if (Array.isArray(type)) return `must be one of: ${type.join(', ')}`;
  if (type === 'integer') return 'must be an integer from -2147483648 to 2147483647';
  return `must be ${type === 'boolean' ? 'true or false' : 'a string'}`;
}

/** Keeps only the requested fields of each item. */
export function project<T extends object>(items: T[], fields: string[] | null): Partial<T>[] {
  if (!fields) return items;
  return items.map((item) => {
    const out: Record<string, unknown> = {};
    for (const f of fields) if (f in item) out[f] = (item as Record<string, unknown>)[f];
    return out as Partial<T>;
  });
}
