import { type Static, Type } from 'typebox';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { boundsOf } from '../sql/bounds.js';
import { nodeCredential } from '../sql/credential.js';
import { locatorValue, ResourceLocator } from '../sql/parameters.js';
import { mysqlPool, runStatement, withConnection } from './client.js';
import { ident, tableIdent } from './sql.js';

/** n8n's MySQL v1 parameters: comma-separated column lists, INSERT modifiers in options. */
const MySqlV1Parameters = Type.Object(
  {
    operation: Type.Enum(['executeQuery', 'insert', 'update'] as const, { default: 'insert' }),
    query: Type.String({ default: '', maxLength: 1_000_000 }),
    table: Type.Optional(ResourceLocator),
    // `id, name, description`: properties of the items, used as columns.
    columns: Type.String({ default: '', maxLength: 20_000 }),
    updateKey: Type.String({ default: 'id', maxLength: 200 }),
    options: Type.Object(
      {
        ignore: Type.Optional(Type.Boolean()),
        priority: Type.Optional(Type.Enum(['LOW_PRIORITY', 'HIGH_PRIORITY'] as const)),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof MySqlV1Parameters>;

function columnsOf(list: string): string[] {
  const columns = list
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (columns.length === 0) throw new NodeOperationError("The parameter 'Columns' names no column");
  for (const c of columns) ident(c);
  return columns;
}

function tableOf(p: Params): string {
  const name = locatorValue(p.table ?? '');
  if (!name) throw new NodeOperationError('Choose a table');
  return tableIdent(name);
}

/** A property of an item as a value: absent is NULL (n8n's copyInputItems). */
const propertyOf = (json: Record<string, unknown>, name: string) =>
  Object.hasOwn(json, name) ? json[name] : null;

/**
 * n8n's MySQL v1 (before 2.0): execute a query per item (the text as given, expressions resolved),
 * insert all items as one INSERT (columns from item properties; `ignore` and `priority` modifiers),
 * update one row per item matched on the update key. As n8n, writes answer the server's result header
 * (`affectedRows`, `insertId`…), one for the insert, one per item for updates; a failure with
 * continue-on-fail answers `{error}`. Identifiers are quoted here (n8n pastes them into the SQL).
 */
export const mySqlV1Node = defineNode({
  type: 'n8n-nodes-base.mySql',
  versions: [1],
  schema: MySqlV1Parameters,
  async execute(ctx) {
    if (ctx.items.length === 0) return output([]);
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'mySql');
    const first = await ctx.params(0);
    const bounds = boundsOf({}, ctx.deadlineAt);
    const pool = await mysqlPool(credential, ctx.deps.connectAddress);
    const seen = { rows: 0 };
    const json = (i: number) => (ctx.items[i]?.json ?? {}) as Record<string, unknown>;
    const asItems = (rows: Array<Record<string, unknown>>, item?: number): Item[] =>
      rows.map((r) => ({
        json: r as Record<string, Json>,
        ...(item !== undefined ? { pairedItem: { item } } : {}),
      }));
    try {
      return output(
        await withConnection(pool, async (conn) => {
          const run = async (text: string, values: unknown[]) => {
            const headers: Array<Record<string, unknown>> = [];
            const rows = await runStatement(pool, conn, text, values, bounds, seen, headers);
            return rows.length > 0 ? rows : headers;
          };
          const out: Item[] = [];
          if (first.operation === 'executeQuery') {
            for (let i = 0; i < ctx.items.length; i++) {
              const p = i === 0 ? first : await ctx.params(i);
              if (!p.query.trim()) throw new NodeOperationError('The query is empty');
              out.push(...asItems(await run(p.query, []), i));
            }
          } else if (first.operation === 'insert') {
            const table = tableOf(first);
            const columns = columnsOf(first.columns);
            const modifiers = [first.options.priority, first.options.ignore ? 'IGNORE' : undefined]
              .filter(Boolean)
              .join(' ');
            const values: unknown[] = [];
            const tuples: string[] = [];
            // MySQL takes at most 65,535 placeholders in one statement: larger inputs go in slices.
            const per = Math.max(1, Math.floor(60_000 / columns.length));
            for (let i = 0; i < ctx.items.length; i++) {
              tuples.push(`(${columns.map(() => '?').join(',')})`);
              for (const c of columns) values.push(propertyOf(json(i), c));
              if (tuples.length === per || i === ctx.items.length - 1) {
                out.push(
                  ...asItems(
                    await run(
                      `INSERT ${modifiers ? `${modifiers} ` : ''}INTO ${table}(${columns.map(ident).join(', ')}) VALUES ${tuples.join(',')}`,
                      values.splice(0),
                    ),
                  ),
                );
                tuples.length = 0;
              }
            }
          } else {
            const table = tableOf(first);
            const key = first.updateKey.trim();
            ident(key);
            const columns = columnsOf(first.columns);
            if (!columns.includes(key)) columns.unshift(key);
            const text = `UPDATE ${table} SET ${columns.map((c) => `${ident(c)} = ?`).join(', ')} WHERE ${ident(key)} = ?`;
            for (let i = 0; i < ctx.items.length; i++)
              out.push(
                ...asItems(
                  await run(text, [...columns.map((c) => propertyOf(json(i), c)), propertyOf(json(i), key)]),
                  i,
                ),
              );
          }
          return out;
        }),
      );
    } catch (err) {
      const continueOnFail = ctx.node.continueOnFail === true || ctx.node.onError === 'continueRegularOutput';
      if (!continueOnFail || !(err instanceof NodeOperationError)) throw err;
      return output([{ json: { error: err.message } }]);
    }
  },
});
