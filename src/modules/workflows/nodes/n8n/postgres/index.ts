import { LRUCache } from 'lru-cache';
import type { Pool, PoolClient } from 'pg';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import { boundsOf, DEFAULT_CONNECT_TIMEOUT_MS, type QueryBounds } from '../sql/bounds.js';
import { nodeCredential } from '../sql/credential.js';
import { locatorValue, queryParameters, type Sort, type Where } from '../sql/parameters.js';
import { checkAgainst, matchColumns, queryText, rowOf, withMatchValue } from '../sql/rows.js';
import { type Row, runPlan, type StatementRunner } from '../sql/run.js';
import {
  deleteStatement,
  insertStatement,
  type SqlDialect,
  type Statement,
  selectStatement,
  updateStatement,
  upsertStatement,
} from '../sql/statements.js';
import { postgresPool, runQuery, withConnection } from './client.js';
import { PostgresParameters, type PostgresParams } from './schema.js';
import { ident, toServerParameters } from './sql.js';

const postgres: SqlDialect = {
  ident,
  param: (n) => `$${n}`,
  returning: (columns) =>
    !columns || columns.length === 0 || columns.includes('*')
      ? ' RETURNING *'
      : ` RETURNING ${columns.map(ident).join(', ')}`,
  insertPrefix: () => 'INSERT INTO',
  onConflictSkip: (skip) => (skip ? ' ON CONFLICT DO NOTHING' : ''),
  upsertTail: (columns, matchOn) => {
    const updates = columns.filter((c) => !matchOn.includes(c));
    const target = `(${matchOn.map(ident).join(', ')})`;
    return updates.length === 0
      ? ` ON CONFLICT ${target} DO NOTHING`
      : ` ON CONFLICT ${target} DO UPDATE SET ${updates.map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`).join(', ')}`;
  },
};

type Ctx = NodeExecutionContext<PostgresParams>;

/**
 * Columns of the table, to name an unknown one as n8n does (none known: the server will say). Read
 * from the catalog, not information_schema.columns: that view took 2–10 ms per execution on a
 * database with many schemas, most of an insert's time (the bench's webhook → Postgres insert).
 */
const COLUMNS_SQL = `SELECT a.attname AS column_name, CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable
  FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped`;

async function tableColumns(client: PoolClient, schema: string, table: string, bounds: QueryBounds) {
  const rows = await runQuery(client, COLUMNS_SQL, [schema, table], bounds, { rows: 0 });
  return new Map(rows.map((r) => [String(r.column_name), r.is_nullable === 'YES']));
}

/** Columns by table, per pool (its credential and address), read a while ago. */
const COLUMNS_TTL_MS = 30_000;
const knownColumns = new WeakMap<Pool, LRUCache<string, Map<string, boolean>>>();

/**
 * The table's columns for the check of a row: those read in the last COLUMNS_TTL_MS when the row
 * passes against them (a round trip fewer per run: the catalog query took as long as the insert),
 * else read again, so a column added since, or a table made since, is never refused on old
 * knowledge. Only a column dropped (or made NOT NULL) since may go past the check: the server
 * then refuses the statement itself.
 */
async function checkColumns(
  pool: Pool,
  key: string,
  row: Record<string, unknown>,
  read: () => Promise<Map<string, boolean>>,
): Promise<void> {
  let cache = knownColumns.get(pool);
  if (!cache) {
    cache = new LRUCache({ max: 500, ttl: COLUMNS_TTL_MS });
    knownColumns.set(pool, cache);
  }
  const known = cache.get(key);
  if (known) {
    try {
      checkAgainst(row, known);
      return;
    } catch (error) {
      if (!(error instanceof NodeOperationError)) throw error;
    }
  }
  const fresh = await read();
  // An empty answer (no such table, or one not visible) is not kept: the server will say.
  if (fresh.size > 0) cache.set(key, fresh);
  else cache.delete(key);
  checkAgainst(row, fresh);
}

async function statementFor(
  ctx: Ctx,
  p: PostgresParams,
  index: number,
  version: number,
  checkRow: (row: Record<string, unknown>) => Promise<void>,
): Promise<Statement> {
  if (p.operation === 'executeQuery') {
    const query = await queryText(p.query, (source) => ctx.evaluate(source, index));
    return toServerParameters(query, await queryParameters(ctx as NodeExecutionContext<unknown>, index));
  }
  const schema = locatorValue(p.schema ?? 'public') || 'public';
  const tableName = locatorValue(p.table ?? '');
  if (!tableName) throw new NodeOperationError('Choose a table');
  const table = `${ident(schema)}.${ident(tableName)}`;
  const where = (p.where?.values ?? []) as Where[];
  switch (p.operation) {
    case 'select':
      return selectStatement(postgres, table, {
        outputColumns: p.options.outputColumns,
        where,
        combine: p.combineConditions,
        sort: (p.sort?.values ?? []) as Sort[],
        limit: p.returnAll ? null : p.limit,
      });
    case 'deleteTable':
      return deleteStatement(postgres, table, {
        command: p.deleteCommand,
        where,
        combine: p.combineConditions,
        cascade: p.options.cascade,
        restartSequences: p.restartSequences,
        postgres: true,
      });
    default: {
      const json = (ctx.items[index]?.json ?? {}) as Record<string, unknown>;
      const row = withMatchValue(p, version, rowOf(p, version, json));
      await checkRow(row);
      if (p.operation === 'insert')
        return insertStatement(postgres, table, row, {
          skipOnConflict: p.options.skipOnConflict,
          outputColumns: p.options.outputColumns,
        });
      const matchOn = matchColumns(p, version);
      return p.operation === 'update'
        ? updateStatement(postgres, table, row, matchOn, p.options.outputColumns)
        : upsertStatement(postgres, table, row, matchOn, p.options.outputColumns);
    }
  }
}

/**
 * n8n's Postgres node (v2.0–2.6): execute a query with parameters ($1… from the Query Parameters
 * option, sent to the server apart from the SQL), insert, update, upsert, select and delete rows or
 * tables, with n8n's query batching. Connects with the node's `postgres` credential through the
 * outbound guard; each query bounded in time (queryTimeout, executionTimeout) and rows (maxRows).
 */
export const postgresNode = defineNode({
  type: 'n8n-nodes-base.postgres',
  versions: [2, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6],
  schema: PostgresParameters,
  rawParameters: ['options.queryReplacement'],
  async execute(ctx) {
    if (ctx.items.length === 0) return output([]);
    const version = ctx.node.typeVersion ?? 2;
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'postgres');
    const first = await ctx.params(0);
    const options = first.options;
    const bounds = boundsOf(options, ctx.deadlineAt);
    const connectMs = options.connectionTimeout
      ? options.connectionTimeout * 1_000
      : DEFAULT_CONNECT_TIMEOUT_MS;
    const pool = await postgresPool(
      credential,
      ctx.deps.connectAddress,
      Math.min(connectMs, bounds.timeoutMs),
    );
    const seen = { rows: 0 };
    const largeNumbers = options.largeNumbersOutput ?? 'text';
    const items = await withConnection(pool, async (client) => {
      const known = new Map<string, Promise<Map<string, boolean>>>();
      const statements: Array<{ statement: Statement; item: number }> = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        const schema = locatorValue(p.schema ?? 'public') || 'public';
        const table = locatorValue(p.table ?? '');
        const key = JSON.stringify([schema, table]);
        // Read at most once per run.
        const read = () => {
          let found = known.get(key);
          if (!found) {
            found = tableColumns(client, schema, table, bounds);
            known.set(key, found);
          }
          return found;
        };
        const checkRow = (row: Record<string, unknown>) => checkColumns(pool, key, row, read);
        statements.push({ statement: await statementFor(ctx, p, i, version, checkRow), item: i });
      }
      const runner: StatementRunner = {
        run: (s) => runQuery(client, s.text, s.values, bounds, seen, { largeNumbers }),
        begin: async () => void (await client.query('BEGIN')),
        commit: async () => void (await client.query('COMMIT')),
        rollback: async () => void (await client.query('ROLLBACK')),
      };
      return runPlan(runner, {
        statements,
        batching: options.queryBatching ?? 'single',
        legacyEmpty: version < 2.3,
        operation: first.operation,
        continueOnFail: ctx.node.continueOnFail === true || ctx.node.onError === 'continueRegularOutput',
        ...(first.operation === 'update' && version >= 2.2
          ? {
              check: (rows: Row[]) => {
                if (rows.length === 0)
                  throw new NodeOperationError("The row you are trying to update doesn't exist", {
                    description: 'No rows matching the provided values were found in the table',
                  });
              },
            }
          : {}),
      });
    });
    return output(items);
  },
});
