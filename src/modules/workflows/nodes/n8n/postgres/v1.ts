import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { boundsOf } from '../sql/bounds.js';
import { nodeCredential } from '../sql/credential.js';
import { sqlValue } from '../sql/statements.js';
import { postgresPool, runQuery, withConnection } from './client.js';
import { ident, toServerParameters } from './sql.js';
import { PostgresV1Parameters, type PostgresV1Params } from './v1-schema.js';

type Statement = { text: string; values: unknown[] };
type Column = { name: string; cast: string | undefined };

/** A cast of n8n's `name:type` columns: a type name (`int`, `varchar(20)`, `text[]`), never SQL. */
const CAST = /^[a-z_][a-z0-9_ ]*(\(\d+(,\s*\d+)?\))?(\[\])*$/i;

/** `id:int, name:text` as columns (pg-promise's ColumnSet with casts). */
function columnsOf(list: string, what: string): Column[] {
  const columns = list
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '')
    .map((c) => {
      const [name = '', cast] = c.split(':').map((s) => s.trim());
      if (cast !== undefined && !CAST.test(cast))
        throw new NodeOperationError(`'${cast.slice(0, 50)}' is not a type to cast ${what} '${name}' to`);
      ident(name);
      return { name, cast: cast || undefined };
    });
  if (columns.length === 0) throw new NodeOperationError(`The parameter '${what}' names no column`);
  return columns;
}

const placeholder = (n: number, c: Column) => `$${n}${c.cast ? `::${c.cast}` : ''}`;

/** pg-promise's `RETURNING a, b` (each a quoted name; `*` all). */
const returning = (fields: string) =>
  ` RETURNING ${fields
    .split(',')
    .map((f) => ident(f.trim() || '*'))
    .join(', ')}`;

function insertStatement(p: PostgresV1Params, rows: Array<Record<string, unknown>>): Statement {
  const columns = columnsOf(p.columns, 'Columns');
  const values: unknown[] = [];
  const tuples = rows.map(
    (json) =>
      `(${columns
        .map((c) => {
          values.push(sqlValue(json[c.name] ?? null));
          return placeholder(values.length, c);
        })
        .join(', ')})`,
  );
  return {
    text: `INSERT INTO ${ident(p.schema || 'public')}.${ident(p.table)}(${columns.map((c) => ident(c.name)).join(', ')}) VALUES ${tuples.join(', ')}${returning(p.returnFields)}`,
    values,
  };
}

/** One row's update, matched on the update key(s): set the columns that are not keys. */
function updateStatement(p: PostgresV1Params, json: Record<string, unknown>): Statement {
  const keys = columnsOf(p.updateKey, 'Update Key');
  const keyNames = new Set(keys.map((k) => k.name));
  const columns = columnsOf(p.columns, 'Columns').filter((c) => !keyNames.has(c.name));
  if (columns.length === 0) throw new NodeOperationError('The parameter Columns names no column to update');
  const values: unknown[] = [];
  const set = columns.map((c) => {
    values.push(sqlValue(json[c.name] ?? null));
    return `${ident(c.name)} = ${placeholder(values.length, c)}`;
  });
  const where = keys.map((k) => {
    values.push(sqlValue(json[k.name] ?? null));
    return `${ident(k.name)} = ${placeholder(values.length, k)}`;
  });
  return {
    text: `UPDATE ${ident(p.schema || 'public')}.${ident(p.table)} SET ${set.join(', ')} WHERE ${where.join(' AND ')}${returning(p.returnFields)}`,
    values,
  };
}

/**
 * n8n's Postgres v1 (the node before 2.0): execute a query (Query Parameters: item properties as $1…,
 * sent apart from the SQL), insert and update rows from item properties (`name:cast` columns), in n8n's
 * modes: `multiple` (default: all items' statements together, one transaction, as n8n's one
 * multi-statement query), `transaction`, `independently`. Same connection, guard and bounds as v2.
 */
export const postgresV1Node = defineNode({
  type: 'n8n-nodes-base.postgres',
  versions: [1],
  schema: PostgresV1Parameters,
  async execute(ctx) {
    if (ctx.items.length === 0) return output([]);
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'postgres');
    const first = await ctx.params(0);
    const bounds = boundsOf({}, ctx.deadlineAt);
    const pool = await postgresPool(credential, ctx.deps.connectAddress);
    const mode = first.additionalFields.mode ?? 'multiple';
    const largeNumbers = first.additionalFields.largeNumbersOutput ?? 'text';
    const continueOnFail = ctx.node.continueOnFail === true || ctx.node.onError === 'continueRegularOutput';
    const json = (i: number) => (ctx.items[i]?.json ?? {}) as Record<string, unknown>;
    const statements: Array<{ statement: Statement; item: number }> = [];
    if (first.operation === 'executeQuery') {
      const props = (first.additionalFields.queryParams ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        const values = props.map((name) => json(i)[name]);
        statements.push({ statement: toServerParameters(p.query, values), item: i });
      }
    } else if (first.operation === 'insert' && mode === 'multiple') {
      // One INSERT of many rows, in slices that stay under PostgreSQL's 65,535 parameters.
      const per = Math.max(1, Math.floor(60_000 / columnsOf(first.columns, 'Columns').length));
      for (let i = 0; i < ctx.items.length; i += per) {
        const rows = ctx.items.slice(i, i + per).map((_, j) => json(i + j));
        statements.push({ statement: insertStatement(first, rows), item: i });
      }
    } else {
      for (let i = 0; i < ctx.items.length; i++)
        statements.push({
          statement:
            first.operation === 'insert'
              ? insertStatement(first, [json(i)])
              : updateStatement(first, json(i)),
          item: i,
        });
    }
    const seen = { rows: 0 };
    const items = await withConnection(pool, async (client) => {
      const run = (s: Statement) => runQuery(client, s.text, s.values, bounds, seen, { largeNumbers });
      const out: Item[] = [];
      const rowsOf = (rows: Array<Record<string, unknown>>, item: number) =>
        out.push(...rows.map((r) => ({ json: r as Record<string, Json>, pairedItem: { item } })));
      const failed = (err: unknown, item: number) => {
        if (!continueOnFail || !(err instanceof NodeOperationError)) throw err;
        const e = err as NodeOperationError & { code?: string };
        out.push({
          json: { ...(json(item) as Record<string, Json>), code: e.code ?? null, message: e.message },
          pairedItem: { item },
        });
      };
      if (mode === 'independently') {
        for (const { statement, item } of statements) {
          try {
            rowsOf(await run(statement), item);
          } catch (err) {
            failed(err, item);
          }
        }
        return out;
      }
      // multiple and transaction: all or nothing; transaction stops at the first failure.
      await client.query('BEGIN');
      let at = 0;
      try {
        for (const { statement, item } of statements) {
          at = item;
          rowsOf(await run(statement), item);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        out.length = 0;
        failed(err, at);
      }
      return out;
    });
    return output(items);
  },
});
