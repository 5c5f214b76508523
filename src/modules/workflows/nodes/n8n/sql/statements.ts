import { NodeOperationError } from '../../../engine/node-type.js';
import type { Sort, Where } from './parameters.js';

/** One statement and its parameters (sent apart from the SQL text). */
export interface Statement {
  text: string;
  values: unknown[];
}

/** What differs between PostgreSQL and MySQL/MariaDB in the statements the nodes build. */
export interface SqlDialect {
  ident(name: string): string;
  /** The placeholder of the `n`-th parameter (1-based): `$n` or `?`. */
  param(n: number): string;
  /** `RETURNING …` after INSERT/UPDATE (PostgreSQL), or '' where the dialect has none. */
  returning(columns: string[] | undefined): string;
  insertPrefix(skipOnConflict: boolean): string;
  onConflictSkip(skipOnConflict: boolean): string;
  upsertTail(columns: string[], matchOn: string[]): string;
}

/** An item's values as the driver sends them: objects as JSON text, the rest as they are. */
export function sqlValue(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    if (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object')) return value;
    return JSON.stringify(value);
  }
  return value;
}

class Params {
  readonly values: unknown[] = [];
  constructor(private readonly d: SqlDialect) {}
  add(value: unknown): string {
    this.values.push(sqlValue(value));
    return this.d.param(this.values.length);
  }
}

function columnsOf(item: Record<string, unknown>): string[] {
  const columns = Object.keys(item);
  if (columns.length === 0) throw new NodeOperationError('The item has no columns to write');
  return columns;
}

export function insertStatement(
  d: SqlDialect,
  table: string,
  item: Record<string, unknown>,
  opts: { skipOnConflict?: boolean | undefined; outputColumns?: string[] | undefined },
): Statement {
  const p = new Params(d);
  const columns = columnsOf(item);
  const values = columns.map((c) => p.add(item[c]));
  const text = `${d.insertPrefix(opts.skipOnConflict === true)} ${table} (${columns.map((c) => d.ident(c)).join(', ')}) VALUES (${values.join(', ')})${d.onConflictSkip(opts.skipOnConflict === true)}${d.returning(opts.outputColumns)}`;
  return { text, values: p.values };
}

export function updateStatement(
  d: SqlDialect,
  table: string,
  item: Record<string, unknown>,
  matchOn: string[],
  outputColumns: string[] | undefined,
): Statement {
  const p = new Params(d);
  if (matchOn.length === 0) throw new NodeOperationError('Choose the column(s) to match on');
  const updates = Object.keys(item).filter((c) => !matchOn.includes(c));
  if (updates.length === 0)
    throw new NodeOperationError(
      "Add values to update to the input item or set the 'Data Mode' to 'Define Below' to define the values to update.",
    );
  const set = updates.map((c) => `${d.ident(c)} = ${p.add(item[c])}`).join(', ');
  const where = matchOn
    .map((c) => {
      if (!(c in item)) throw new NodeOperationError(`Column to match on '${c}' not found in the item`);
      return `${d.ident(c)} = ${p.add(item[c])}`;
    })
    .join(' AND ');
  return { text: `UPDATE ${table} SET ${set} WHERE ${where}${d.returning(outputColumns)}`, values: p.values };
}

export function upsertStatement(
  d: SqlDialect,
  table: string,
  item: Record<string, unknown>,
  matchOn: string[],
  outputColumns: string[] | undefined,
): Statement {
  const p = new Params(d);
  const columns = columnsOf(item);
  if (matchOn.length === 0) throw new NodeOperationError('Choose the column(s) to match on');
  for (const c of matchOn)
    if (!(c in item)) throw new NodeOperationError(`Column to match on '${c}' not found in the item`);
  const values = columns.map((c) => p.add(item[c]));
  const text = `${d.insertPrefix(false)} ${table} (${columns.map((c) => d.ident(c)).join(', ')}) VALUES (${values.join(', ')})${d.upsertTail(columns, matchOn)}${d.returning(outputColumns)}`;
  return { text, values: p.values };
}

function whereClause(d: SqlDialect, p: Params, clauses: Where[], combine: string | undefined): string {
  if (clauses.length === 0) return '';
  const joiner = combine === 'OR' ? ' OR ' : ' AND ';
  const parts = clauses.map((clause, index) => {
    const column = d.ident(clause.column);
    const condition = clause.condition ?? 'equal';
    if (condition === 'IS NULL' || condition === 'IS NOT NULL') return `${column} ${condition}`;
    let value = clause.value;
    if (['>', '<', '>=', '<='].includes(condition)) {
      value = Number(value);
      if (Number.isNaN(value))
        throw new NodeOperationError(
          `Operator in entry ${index + 1} of 'Select Rows' works with numbers, but value ${String(clause.value)} is not a number`,
        );
    }
    const operator = condition === 'equal' ? '=' : condition;
    return `${column} ${operator} ${p.add(value)}`;
  });
  return ` WHERE ${parts.join(joiner)}`;
}

export function selectStatement(
  d: SqlDialect,
  table: string,
  opts: {
    outputColumns?: string[] | undefined;
    where: Where[];
    combine?: string | undefined;
    sort: Sort[];
    limit: number | null;
  },
): Statement {
  const p = new Params(d);
  const columns =
    !opts.outputColumns || opts.outputColumns.length === 0 || opts.outputColumns.includes('*')
      ? '*'
      : opts.outputColumns.map((c) => d.ident(c)).join(', ');
  let text = `SELECT ${columns} FROM ${table}${whereClause(d, p, opts.where, opts.combine)}`;
  if (opts.sort.length > 0)
    text += ` ORDER BY ${opts.sort.map((s) => `${d.ident(s.column)} ${s.direction === 'DESC' ? 'DESC' : 'ASC'}`).join(', ')}`;
  if (opts.limit !== null) text += ` LIMIT ${Math.max(1, Math.floor(opts.limit))}`;
  return { text, values: p.values };
}

export function deleteStatement(
  d: SqlDialect,
  table: string,
  opts: {
    command: 'truncate' | 'delete' | 'drop';
    where: Where[];
    combine?: string | undefined;
    cascade?: boolean | undefined;
    restartSequences?: boolean | undefined;
    postgres: boolean;
  },
): Statement {
  const cascade = opts.cascade && opts.postgres ? ' CASCADE' : '';
  if (opts.command === 'drop') return { text: `DROP TABLE IF EXISTS ${table}${cascade}`, values: [] };
  if (opts.command === 'truncate')
    return {
      text: `TRUNCATE TABLE ${table}${opts.restartSequences && opts.postgres ? ' RESTART IDENTITY' : ''}${cascade}`,
      values: [],
    };
  const p = new Params(d);
  return { text: `DELETE FROM ${table}${whereClause(d, p, opts.where, opts.combine)}`, values: p.values };
}
