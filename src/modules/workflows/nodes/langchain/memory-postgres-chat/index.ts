import { Type } from 'typebox';
import { defineSubNode, type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import { postgresPool, runQuery, withConnection } from '../../n8n/postgres/client.js';
import { boundsOf } from '../../n8n/sql/bounds.js';
import { nodeCredential } from '../../n8n/sql/credential.js';
import { type ChatMemory, LANGCHAIN, MAX_HISTORY_MESSAGES } from '../ai-parts.js';
import {
  chatMessageOf,
  memoryMessageOf,
  SessionParameters,
  sessionFromInput,
  sessionIdOf,
  storedMessage,
  storedOfMemory,
} from '../memory-session.js';

const Parameters = Type.Object(
  {
    ...SessionParameters,
    tableName: Type.String({ default: 'n8n_chat_histories', maxLength: 63 }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * n8n's Postgres Chat Memory (LangChain's PostgresChatMessageHistory): the session's turns in a table of
 * the workflow's own `postgres` database (`id SERIAL, session_id VARCHAR(255), message JSONB`, created if
 * missing), reached through the outbound-address guard like the Postgres node; the last
 * `contextWindowLength` exchanges are read back.
 */
export const memoryPostgresChatNode = defineSubNode({
  type: `${LANGCHAIN}.memoryPostgresChat`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_memory',
  async supply(ctx, itemIndex): Promise<ChatMemory> {
    const p = await ctx.params(itemIndex);
    const sessionId = sessionIdOf(ctx.node.typeVersion, p, ctx.items[itemIndex]);
    if (sessionId.length > 255) throw new NodeOperationError('The session ID is longer than 255 characters');
    if (!IDENTIFIER.test(p.tableName))
      throw new NodeOperationError(
        `The table name '${p.tableName.slice(0, 80)}' is not a plain SQL name (letters, digits, '_')`,
      );
    const table = `"${p.tableName}"`;
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'postgres');
    const bounds = boundsOf({}, ctx.deadlineAt);
    const pool = await postgresPool(credential, ctx.deps.connectAddress);
    const limit = p.contextWindowLength * 2;
    let created = false;
    const query = (sql: string, values: unknown[]) =>
      withConnection(pool, async (client) => {
        if (!created) {
          await runQuery(
            client,
            `CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, session_id VARCHAR(255) NOT NULL, message JSONB NOT NULL)`,
            [],
            bounds,
            { rows: 0 },
          );
          created = true;
        }
        return runQuery(client, sql, values, bounds, { rows: 0 });
      });
    return {
      kind: 'memory',
      sessionFromInput: sessionFromInput(ctx.node.typeVersion, p),
      async load() {
        const rows = await query(
          `SELECT message FROM (SELECT id, message FROM ${table} WHERE session_id = $1 ORDER BY id DESC LIMIT $2) last ORDER BY id`,
          [sessionId, limit],
        );
        return rows.map((r) => chatMessageOf(r.message)).filter((m) => m !== null);
      },
      history: {
        async all() {
          const rows = await query(
            `SELECT message FROM (SELECT id, message FROM ${table} WHERE session_id = $1 ORDER BY id DESC LIMIT $2) last ORDER BY id`,
            [sessionId, MAX_HISTORY_MESSAGES],
          );
          return rows.map((r) => memoryMessageOf(r.message)).filter((m) => m !== null);
        },
        async clear() {
          await query(`DELETE FROM ${table} WHERE session_id = $1`, [sessionId]);
        },
        async add(messages) {
          for (const m of messages) {
            const stored = storedOfMemory(m);
            await query(`INSERT INTO ${table} (session_id, message) VALUES ($1, $2)`, [
              sessionId,
              JSON.stringify({ ...stored.data, type: stored.type }),
            ]);
          }
        },
      },
      async save(input, output) {
        const human = storedMessage('user', input);
        const ai = storedMessage('assistant', output);
        await query(`INSERT INTO ${table} (session_id, message) VALUES ($1, $2), ($1, $3)`, [
          sessionId,
          JSON.stringify({ ...human.data, type: human.type }),
          JSON.stringify({ ...ai.data, type: ai.type }),
        ]);
      },
    };
  },
});
