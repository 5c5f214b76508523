import { type SelectQueryBuilder, sql } from 'kysely';
import { encodeCursor, type ListQuery, type ListSpec, project } from '../http/list-query.js';

interface ListPage<T> {
  data: Partial<T>[];
  nextCursor: string | null;
}

/**
 * Runs a list query: field filters, sort with `id` as tie-breaker, keyset cursor or offset,
 * one extra row to know whether a next page exists, then the `fields` projection.
 */
export async function runList<DB, TB extends keyof DB, O extends Record<string, unknown>, T extends object>(
  base: SelectQueryBuilder<DB, TB, O>,
  query: ListQuery,
  spec: ListSpec,
  toItem: (row: O) => T,
  idColumn = 'id',
): Promise<ListPage<T>> {
  let qb = base;
  for (const [field, value] of Object.entries(query.filters)) {
    const column = spec.columns[field] ?? field;
    qb = qb.where(sql<boolean>`${sql.ref(column)} = ${value}`);
  }
  const sortColumn = spec.columns[query.sort] ?? query.sort;
  const sortRef = sql.ref(sortColumn);
  const idRef = sql.ref(idColumn);
  // Nulls sort last in either order, on both databases (their own defaults differ).
  const nullable = spec.nullable?.includes(query.sort) ?? false;
  if (query.cursor) {
    const { value, id } = query.cursor;
    const cmp = query.order === 'asc' ? sql`>` : sql`<`;
    if (sortColumn === idColumn) {
      qb = qb.where(sql<boolean>`${idRef} ${cmp} ${id}`);
    } else if (value === null) {
      // Past the last value: only the remaining nulls, by id.
      qb = qb.where(sql<boolean>`(${sortRef} is null and ${idRef} ${cmp} ${id})`);
    } else {
      const after = sql<boolean>`(${sortRef} ${cmp} ${value} or (${sortRef} = ${value} and ${idRef} ${cmp} ${id}))`;
      qb = qb.where(nullable ? sql<boolean>`(${after} or ${sortRef} is null)` : after);
    }
  }
  const direction = query.order === 'asc' ? sql`asc` : sql`desc`;
  if (nullable) qb = qb.orderBy(sql`(case when ${sortRef} is null then 1 else 0 end) asc`);
  qb = qb.orderBy(sql`${sortRef} ${direction}`);
  if (sortColumn !== idColumn) qb = qb.orderBy(sql`${idRef} ${direction}`);
  const rows = await qb
    .limit(query.limit + 1)
    .offset(query.offset)
    .execute();
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  const lastSort = last ? last[sortColumn.split('.').at(-1) as keyof O] : undefined;
  const nextCursor =
    hasMore && last
      ? encodeCursor({
          sort: query.sort,
          order: query.order,
          value: (lastSort ?? null) as string | number | null,
          id: String(last[idColumn.split('.').at(-1) as keyof O]),
        })
      : null;
  return { data: project(page.map(toItem), query.fields), nextCursor };
}
