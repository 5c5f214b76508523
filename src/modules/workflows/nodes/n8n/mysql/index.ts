import type { Pool, PoolConnection } from 'mysql2';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import { boundsOf, type QueryBounds } from '../sql/bounds.js';
import { nodeCredential } from '../sql/credential.js';
import { locatorValue, queryParameters, type Sort, type Where } from '../sql/parameters.js';
import { checkAgainst, matchColumns, queryText, rowOf, withMatchValue } from '../sql/rows.js';
import { runPlan, type StatementRunner } from '../sql/run.js';
import {
  deleteStatement,
  insertStatement,
  type SqlDialect,
  type Statement,
  selectStatement,
  updateStatement,
  upsertStatement,
} from '../sql/statements.js';
import { mysqlPool, runStatement, withConnection } from './client.js';
import { MySqlParameters, type MySqlParams } from './schema.js';
import { ident, tableIdent, toMySqlParameters } from './sql.js';

const mysqlDialect = (priority?: string): SqlDialect => ({
  ident,
  param: () => '?',
  returning: () => '',
  insertPrefix: (skip) => `INSERT${priority ? ` ${priority}` : ''}${skip ? ' IGNORE' : ''} INTO`,
  onConflictSkip: () => '',
  upsertTail: (columns, matchOn) => {
    const updates = columns.filter((c) => !matchOn.includes(c));
    const set = (updates.length > 0 ? updates : matchOn).map((c) => `${ident(c)} = VALUES(${ident(c)})`);
    return ` ON DUPLICATE KEY UPDATE ${set.join(', ')}`;
  },
});

type Ctx = NodeExecutionContext<MySqlParams>;

async function tableColumns(pool: Pool, conn: PoolConnection, table: string, bounds: QueryBounds) {
  const parts = table.split('.');
  const name = parts.pop() as string;
  const rows = await runStatement(
    pool,
    conn,
    parts.length > 0
      ? 'SELECT COLUMN_NAME AS c, IS_NULLABLE AS n FROM information_schema.columns WHERE table_schema = ? AND table_name = ?'
      : 'SELECT COLUMN_NAME AS c, IS_NULLABLE AS n FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?',
    parts.length > 0 ? [parts.join('.'), name] : [name],
    bounds,
    { rows: 0 },
  );
  return new Map(rows.map((r) => [String(r.c), r.n === 'YES']));
}

async function statementFor(
  ctx: Ctx,
  p: MySqlParams,
  index: number,
  version: number,
  columns: () => Promise<Map<string, boolean>>,
): Promise<Statement> {
  if (p.operation === 'executeQuery') {
    const query = await queryText(p.query, (source) => ctx.evaluate(source, index));
    return toMySqlParameters(query, await queryParameters(ctx as NodeExecutionContext<unknown>, index));
  }
  const name = locatorValue(p.table ?? '');
  if (!name) throw new NodeOperationError('Choose a table');
  const table = tableIdent(name);
  const d = mysqlDialect(p.options.priority);
  const where = (p.where?.values ?? []) as Where[];
  switch (p.operation) {
    case 'select': {
      const s = selectStatement(d, table, {
        outputColumns: p.options.outputColumns,
        where,
        combine: p.combineConditions,
        sort: (p.sort?.values ?? []) as Sort[],
        limit: p.returnAll ? null : p.limit,
      });
      return p.options.selectDistinct ? { ...s, text: s.text.replace(/^SELECT /, 'SELECT DISTINCT ') } : s;
    }
    case 'deleteTable':
      return deleteStatement(d, table, {
        command: p.deleteCommand,
        where,
        combine: p.combineConditions,
        postgres: false,
      });
    default: {
      const json = (ctx.items[index]?.json ?? {}) as Record<string, unknown>;
      const row = withMatchValue(p, version, rowOf(p, version, json));
      checkAgainst(row, await columns());
      if (p.operation === 'insert')
        return insertStatement(d, table, row, { skipOnConflict: p.options.skipOnConflict });
      const matchOn = matchColumns(p, version);
      return p.operation === 'update'
        ? updateStatement(d, table, row, matchOn, undefined)
        : upsertStatement(d, table, row, matchOn, undefined);
    }
  }
}

/**
 * n8n's MySQL node (v2.0–2.5), for MySQL and MariaDB: execute a query ($1… parameters sent as
 * prepared-statement values), insert, update, upsert, select, delete; n8n's query batching. Writes
 * answer `{success: true}` as n8n's do. Bounds and the outbound guard as the Postgres node.
 */
export const mySqlNode = defineNode({
  type: 'n8n-nodes-base.mySql',
  versions: [2, 2.1, 2.2, 2.3, 2.4, 2.5],
  schema: MySqlParameters,
  rawParameters: ['options.queryReplacement'],
  async execute(ctx) {
    if (ctx.items.length === 0) return output([]);
    const version = ctx.node.typeVersion ?? 2;
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'mySql');
    const first = await ctx.params(0);
    const options = first.options;
    const bounds = boundsOf(options, ctx.deadlineAt);
    const pool = await mysqlPool(credential, ctx.deps.connectAddress, {
      ...(options.connectTimeout
        ? { connectTimeoutMs: Math.min(options.connectTimeout, bounds.timeoutMs) }
        : {}),
      ...(options.connectionLimit ? { connectionLimit: options.connectionLimit } : {}),
    });
    const seen = { rows: 0 };
    const items = await withConnection(pool, async (conn) => {
      const known = new Map<string, Promise<Map<string, boolean>>>();
      const statements: Array<{ statement: Statement; item: number }> = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        const table = locatorValue(p.table ?? '');
        const columns = () => {
          let found = known.get(table);
          if (!found) {
            found = tableColumns(pool, conn, table, bounds);
            known.set(table, found);
          }
          return found;
        };
        statements.push({ statement: await statementFor(ctx, p, i, version, columns), item: i });
      }
      const plain = (text: string) => runStatement(pool, conn, text, [], bounds, { rows: 0 });
      const runner: StatementRunner = {
        run: (s) => runStatement(pool, conn, s.text, s.values, bounds, seen),
        begin: async () => void (await plain('START TRANSACTION')),
        commit: async () => void (await plain('COMMIT')),
        rollback: async () => void (await plain('ROLLBACK')),
      };
      return runPlan(runner, {
        statements,
        batching: options.queryBatching ?? 'single',
        legacyEmpty: version < 2.2,
        operation: first.operation,
        continueOnFail: ctx.node.continueOnFail === true || ctx.node.onError === 'continueRegularOutput',
      });
    });
    return output(items);
  },
});
