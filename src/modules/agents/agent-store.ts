import type { Kysely } from 'kysely';
import { lockRow } from '../../core/db/row-lock.js';
import type { Database } from '../../core/db/types.js';
import type {
  AgentMessagesTable,
  AgentResponsesTable,
  AgentRunsTable,
  AgentsTable,
  ConversationsTable,
} from './tables.js';

/** Statuses a run does not leave. */
const ENDED_RUN: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
export type AgentRow = AgentsTable;
export type ConversationRow = ConversationsTable;
export type MessageRow = AgentMessagesTable;
export type RunRow = AgentRunsTable;
export type ResponseRow = AgentResponsesTable;

/** Queries on agents, conversations and their messages; agents and conversations scoped to their account. */
export class AgentStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * `fn` on a store bound to one transaction holding the conversation's row lock (a no-op update):
   * a turn storing its question and run, and a reset or delete checking for runs and removing
   * messages, happen one after the other, never interleaved.
   */
  withConversationLocked<T>(conversationId: string, fn: (store: AgentStore) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'conversations', conversationId);
      return fn(new AgentStore(trx));
    });
  }

  // Agents.

  async insertAgent(row: AgentRow): Promise<void> {
    await this.db.insertInto('agents').values(row).execute();
  }

  agentsQuery(accountId: string) {
    return this.db.selectFrom('agents').selectAll().where('account_id', '=', accountId);
  }

  getAgent(accountId: string, id: string): Promise<AgentRow | undefined> {
    return this.agentsQuery(accountId).where('id', '=', id).executeTakeFirst();
  }

  async updateAgent(
    accountId: string,
    id: string,
    values: Pick<AgentRow, 'name' | 'definition' | 'updated_at'>,
  ) {
    const result = await this.db
      .updateTable('agents')
      .set(values)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes an agent; its conversations stay (they are the users'), no longer answerable. */
  async deleteAgent(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('agents')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  // Conversations.

  async insertConversation(row: ConversationRow): Promise<void> {
    await this.db.insertInto('conversations').values(row).execute();
  }

  conversationsQuery(accountId: string) {
    return this.db.selectFrom('conversations').selectAll().where('account_id', '=', accountId);
  }

  getConversation(accountId: string, id: string): Promise<ConversationRow | undefined> {
    return this.conversationsQuery(accountId).where('id', '=', id).executeTakeFirst();
  }

  /** A conversation no agent holds (a welcome) is taken by the first agent a message goes to. */
  async adoptConversation(id: string, agentId: string): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ agent_id: agentId })
      .where('id', '=', id)
      .where('agent_id', 'is', null)
      .execute();
  }

  async updateConversation(
    id: string,
    values: Partial<Pick<ConversationRow, 'title' | 'metadata' | 'updated_at'>>,
  ): Promise<void> {
    await this.db.updateTable('conversations').set(values).where('id', '=', id).execute();
  }

  async touchConversation(id: string, at: string): Promise<void> {
    await this.db.updateTable('conversations').set({ updated_at: at }).where('id', '=', id).execute();
  }

  async deleteConversation(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const owned = await trx
        .selectFrom('conversations')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!owned) return false;
      await trx.deleteFrom('agent_messages').where('conversation_id', '=', id).execute();
      await trx.deleteFrom('conversations').where('id', '=', id).execute();
      return true;
    });
  }

  // Messages.

  async insertMessage(row: MessageRow): Promise<void> {
    await this.db.insertInto('agent_messages').values(row).execute();
  }

  messagesQuery(conversationId: string) {
    return this.db.selectFrom('agent_messages').selectAll().where('conversation_id', '=', conversationId);
  }

  /** The newest `limit` messages of a conversation, oldest first (what the model sees). */
  async recentMessages(conversationId: string, limit: number): Promise<MessageRow[]> {
    if (limit <= 0) return [];
    const rows = await this.messagesQuery(conversationId).orderBy('id', 'desc').limit(limit).execute();
    return rows.reverse();
  }

  /** The `limit` messages before `beforeId` (a background run's history), oldest first. */
  async messagesBefore(conversationId: string, beforeId: string, limit: number): Promise<MessageRow[]> {
    if (limit <= 0) return [];
    const rows = await this.messagesQuery(conversationId)
      .where('id', '<', beforeId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse();
  }

  async updateMessage(conversationId: string, id: string, content: string): Promise<void> {
    await this.db
      .updateTable('agent_messages')
      .set({ content })
      .where('conversation_id', '=', conversationId)
      .where('id', '=', id)
      .execute();
  }

  async deleteMessage(conversationId: string, id: string): Promise<void> {
    await this.db
      .deleteFrom('agent_messages')
      .where('conversation_id', '=', conversationId)
      .where('id', '=', id)
      .execute();
  }

  /** Deletes every message of a conversation; how many there were. */
  async clearMessages(conversationId: string): Promise<number> {
    const result = await this.db
      .deleteFrom('agent_messages')
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** A run of the conversation queued, in progress or waiting, if any. */
  activeRun(conversationId: string): Promise<Pick<RunRow, 'id' | 'status'> | undefined> {
    return this.db
      .selectFrom('agent_runs')
      .select(['id', 'status'])
      .where('conversation_id', '=', conversationId)
      .where('status', 'in', ['queued', 'in_progress', 'requires_action'])
      .executeTakeFirst();
  }

  // Runs.

  async insertRun(row: RunRow): Promise<void> {
    await this.db.insertInto('agent_runs').values(row).execute();
  }

  getRun(accountId: string, id: string): Promise<RunRow | undefined> {
    return this.db
      .selectFrom('agent_runs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Moves a run on from one of `from` (a compare-and-set: of two callers racing, one wins); false
   * when it was not in one of them.
   */
  async moveRun(id: string, from: readonly string[], values: Partial<Omit<RunRow, 'id'>>): Promise<boolean> {
    // An ended run drops its attachments in the same update: whoever reads it ended reads it without.
    const ending = values.status !== undefined && ENDED_RUN.has(values.status);
    const options = ending && values.options === undefined ? await this.optionsWithoutAttachments(id) : null;
    const result = await this.db
      .updateTable('agent_runs')
      .set(options === null ? values : { ...values, options })
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * An ended run no longer needs its message's image and file bytes (kept while it may resume in
   * another process): the transcript holds notes of them, the run row keeps nothing. Null when the
   * options hold none (nothing to change). A run's options are written once, when it is created.
   */
  private async optionsWithoutAttachments(id: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('agent_runs')
      .select('options')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row?.options) return null;
    const options = JSON.parse(row.options) as Record<string, unknown>;
    if (!('images' in options) && !('files' in options)) return null;
    delete options.images;
    delete options.files;
    return JSON.stringify(options);
  }

  /** Records a paused run's answers if its calls are still as read (a compare-and-set on `pending`). */
  async answerRun(id: string, pending: string, values: Partial<Omit<RunRow, 'id'>>): Promise<boolean> {
    const result = await this.db
      .updateTable('agent_runs')
      .set(values)
      .where('id', '=', id)
      .where('status', '=', 'requires_action')
      .where('pending', '=', pending)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Takes a background run up: from `status` with `attempts` as read (a compare-and-set: of two
   * workers racing, one wins) to in_progress with one attempt more.
   */
  async claimRun(id: string, status: string, attempts: number, updatedAt: string): Promise<boolean> {
    const result = await this.db
      .updateTable('agent_runs')
      .set({ status: 'in_progress', attempts: attempts + 1, updated_at: updatedAt })
      .where('id', '=', id)
      .where('status', '=', status)
      .where('attempts', '=', attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Paused runs whose first undecided approval expired by `now`, oldest deadline first. */
  expiredApprovals(now: string, limit: number): Promise<RunRow[]> {
    return this.db
      .selectFrom('agent_runs')
      .selectAll()
      .where('approval_deadline', '<=', now)
      .where('status', '=', 'requires_action')
      .orderBy('approval_deadline')
      .limit(limit)
      .execute();
  }

  /** Background runs not yet ended (queued, or in progress when their worker stopped), oldest first. */
  unfinishedBackgroundRuns(limit: number): Promise<Array<Pick<RunRow, 'id' | 'account_id'>>> {
    return this.db
      .selectFrom('agent_runs')
      .select(['id', 'account_id'])
      .where('background', '=', 1)
      .where('status', 'in', ['queued', 'in_progress'])
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  // Responses (OpenAI's Responses API).

  async insertResponse(row: ResponseRow): Promise<void> {
    await this.db.insertInto('agent_responses').values(row).execute();
  }

  getResponse(accountId: string, id: string): Promise<ResponseRow | undefined> {
    return this.db
      .selectFrom('agent_responses')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
}
