import type { ExpressionBuilder, Kysely } from 'kysely';
import { lockRow } from '../../core/db/row-lock.js';
import type { Database } from '../../core/db/types.js';
import type { FlowMessagesTable, FlowsTable } from './tables.js';

export type FlowRow = FlowsTable;
export type FlowMessageRow = FlowMessagesTable;

/** Filters of the chat-message list and delete (Flowise's query parameters). */
export interface MessageFilter {
  chatId?: string;
  sessionId?: string;
  /** ISO timestamps, inclusive. */
  startDate?: string;
  endDate?: string;
}

/** Queries on flows and their chat messages; every flow query is scoped to its account. */
export class FlowStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Inserts a flow unless its account holds `max` already (false then). Counted on the account's
   * locked row, the one row that stands for the account: creates racing each see the others, so a
   * burst cannot pass the bound.
   */
  async insertUnder(row: FlowRow, max: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'accounts', row.account_id);
      const counted = await trx
        .selectFrom('flows')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('account_id', '=', row.account_id)
        .executeTakeFirst();
      if (Number(counted?.n ?? 0) >= max) return false;
      await trx.insertInto('flows').values(row).execute();
      return true;
    });
  }

  async get(accountId: string, id: string): Promise<FlowRow | undefined> {
    return this.db
      .selectFrom('flows')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** A flow by id alone: the streaming probe, which has no key and so no account. */
  async getAnyAccount(id: string): Promise<FlowRow | undefined> {
    return this.db.selectFrom('flows').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(accountId: string, limit: number): Promise<FlowRow[]> {
    return this.db
      .selectFrom('flows')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  async update(
    accountId: string,
    id: string,
    values: Pick<FlowRow, 'name' | 'kind' | 'definition' | 'updated_at'>,
  ) {
    const result = await this.db
      .updateTable('flows')
      .set(values)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const owned = await trx
        .selectFrom('flows')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!owned) return false;
      await trx.deleteFrom('flow_messages').where('flow_id', '=', id).execute();
      // Its feedback, leads and upsert history go with it.
      await trx
        .deleteFrom('flowise_objects')
        .where('account_id', '=', accountId)
        .where('flow_id', '=', id)
        .execute();
      await trx.deleteFrom('flows').where('id', '=', id).execute();
      return true;
    });
  }

  /** The question and the answer of one prediction, together or not at all. */
  async addTurn(question: FlowMessageRow, answer: FlowMessageRow): Promise<void> {
    await this.db.insertInto('flow_messages').values([question, answer]).execute();
  }

  /** One message of a flow (the feedback API rates answers by id). */
  async message(flowId: string, id: string): Promise<FlowMessageRow | undefined> {
    return this.db
      .selectFrom('flow_messages')
      .selectAll()
      .where('flow_id', '=', flowId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The newest `turns` question/answer pairs of a session, oldest first. */
  async recent(flowId: string, sessionId: string, turns: number): Promise<FlowMessageRow[]> {
    const rows = await this.db
      .selectFrom('flow_messages')
      .selectAll()
      .where('flow_id', '=', flowId)
      .where('session_id', '=', sessionId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(turns * 2)
      .execute();
    return rows.reverse();
  }

  async messages(flowId: string, filter: MessageFilter, order: 'asc' | 'desc', limit: number) {
    return this.db
      .selectFrom('flow_messages')
      .selectAll()
      .where(matching(flowId, filter))
      .orderBy('created_at', order)
      .orderBy('id', order)
      .limit(limit)
      .execute();
  }

  async deleteMessages(flowId: string, filter: MessageFilter): Promise<number> {
    const result = await this.db
      .deleteFrom('flow_messages')
      .where(matching(flowId, filter))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** The messages of a flow that pass the filter, for a select or a delete alike. */
function matching(flowId: string, filter: MessageFilter) {
  return (eb: ExpressionBuilder<Database, 'flow_messages'>) => {
    const conditions = [eb('flow_id', '=', flowId)];
    if (filter.chatId !== undefined) conditions.push(eb('chat_id', '=', filter.chatId));
    if (filter.sessionId !== undefined) conditions.push(eb('session_id', '=', filter.sessionId));
    if (filter.startDate !== undefined) conditions.push(eb('created_at', '>=', filter.startDate));
    if (filter.endDate !== undefined) conditions.push(eb('created_at', '<=', filter.endDate));
    return eb.and(conditions);
  };
}
