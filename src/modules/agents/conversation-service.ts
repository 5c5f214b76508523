import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import type { MessageView } from './agent-events.js';
import type { AgentService } from './agent-service.js';
import type { AgentStore, ConversationRow, MessageRow } from './agent-store.js';
import type { ConversationBodyT } from './schemas.js';

export const CONVERSATION_LIST: ListSpec = {
  columns: { agentId: 'agent_id', userId: 'user_id', createdAt: 'created_at', updatedAt: 'updated_at' },
  sortable: ['id', 'createdAt', 'updatedAt'],
  filters: { agentId: 'string', userId: 'string' },
  projectable: [],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 50,
  maxLimit: 200,
};

export const MESSAGE_LIST: ListSpec = {
  columns: { createdAt: 'created_at', role: 'role' },
  sortable: ['id'],
  filters: { role: ['user', 'assistant', 'tool'] },
  projectable: [],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 50,
  maxLimit: 200,
};

/** Messages an export carries at most. */
const EXPORT_MAX_MESSAGES = 5_000;

function conversationView(row: ConversationRow) {
  return {
    id: row.id,
    agentId: row.agent_id,
    userId: row.user_id,
    title: row.title,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function messageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    role: row.role as MessageView['role'],
    content: row.content,
    steps: JSON.parse(row.steps) as MessageView['steps'],
    sources: JSON.parse(row.sources) as MessageView['sources'],
    usage: row.usage ? (JSON.parse(row.usage) as MessageView['usage']) : null,
    createdAt: row.created_at,
  };
}

/** The end user a principal speaks for: a customer token's customer, none for a key. */
export const userOf = (p: Principal): string | null => (p.kind === 'customer_token' ? p.customerId : null);

/**
 * Conversations and their messages. A key sees its account's; a customer token only those of its
 * own customer (others are 404: their existence is not revealed).
 */
export class ConversationService {
  constructor(
    private readonly store: AgentStore,
    private readonly agents: AgentService,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, body: ConversationBodyT) {
    await this.agents.load(principal.accountId, body.agentId);
    const customer = userOf(principal);
    if (customer !== null && body.userId !== undefined && body.userId !== customer)
      throw new AppError('FORBIDDEN', 'A customer token opens conversations for its own customer only', {
        userId: body.userId,
      });
    const row = await this.insert(principal.accountId, {
      agentId: body.agentId,
      userId: customer ?? body.userId ?? null,
      title: body.title ?? null,
      metadata: body.metadata ?? {},
    });
    return conversationView(row);
  }

  async insert(
    accountId: string,
    input: {
      agentId: string | null;
      userId: string | null;
      title: string | null;
      metadata: Record<string, unknown>;
    },
  ): Promise<ConversationRow> {
    const now = this.clock.now().toISOString();
    const row: ConversationRow = {
      id: newId('conv'),
      account_id: accountId,
      agent_id: input.agentId,
      user_id: input.userId,
      title: input.title,
      metadata: JSON.stringify(input.metadata),
      created_at: now,
      updated_at: now,
    };
    await this.store.insertConversation(row);
    return row;
  }

  async list(principal: Principal, rawQuery: Record<string, unknown>) {
    const customer = userOf(principal);
    const query = parseListQuery(rawQuery, CONVERSATION_LIST);
    let base = this.store.conversationsQuery(principal.accountId);
    if (customer !== null) base = base.where('user_id', '=', customer);
    return runList(base, query, CONVERSATION_LIST, (row) => conversationView(row));
  }

  /** A conversation the principal may see, or 404. */
  async mustGet(principal: Principal, id: string): Promise<ConversationRow> {
    const row = await this.store.getConversation(principal.accountId, id);
    const customer = userOf(principal);
    if (!row || (customer !== null && row.user_id !== customer))
      throw notFound('CONVERSATION_NOT_FOUND', 'Conversation', id);
    return row;
  }

  async get(principal: Principal, id: string, rawQuery: Record<string, unknown>) {
    const row = await this.mustGet(principal, id);
    return { ...conversationView(row), messages: await this.messages(row.id, rawQuery) };
  }

  async messages(conversationId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, MESSAGE_LIST);
    return runList(this.store.messagesQuery(conversationId), query, MESSAGE_LIST, (row) => messageView(row));
  }

  /** Changes a conversation's title and metadata (the metadata whole). */
  async update(
    principal: Principal,
    id: string,
    body: { title?: string | null; metadata?: Record<string, unknown> },
  ) {
    const row = await this.mustGet(principal, id);
    const values = {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.metadata !== undefined ? { metadata: JSON.stringify(body.metadata) } : {}),
      updated_at: this.clock.now().toISOString(),
    };
    await this.store.updateConversation(row.id, values);
    return conversationView({ ...row, ...values });
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.mustGet(principal, id);
    await this.store.deleteConversation(principal.accountId, id);
  }

  /** `store`: the locked one of `AgentStore.withConversationLocked`, when the caller holds it. */
  async addMessage(
    conversationId: string,
    input: Pick<MessageView, 'role' | 'content' | 'steps' | 'sources' | 'usage'>,
    store: AgentStore = this.store,
  ): Promise<MessageView> {
    const at = this.clock.now().toISOString();
    const row: MessageRow = {
      id: newId('msg'),
      conversation_id: conversationId,
      role: input.role,
      content: input.content,
      steps: JSON.stringify(input.steps),
      sources: JSON.stringify(input.sources),
      usage: input.usage ? JSON.stringify(input.usage) : null,
      created_at: at,
    };
    await store.insertMessage(row);
    await store.touchConversation(conversationId, at);
    return messageView(row);
  }

  /**
   * The conversation as one JSON document (its messages oldest first, at most EXPORT_MAX_MESSAGES:
   * `truncated` says when more exist).
   */
  async export(principal: Principal, id: string) {
    const row = await this.mustGet(principal, id);
    const rows = await this.store
      .messagesQuery(row.id)
      .orderBy('id')
      .limit(EXPORT_MAX_MESSAGES + 1)
      .execute();
    return {
      format: 'agent-conversation' as const,
      version: 1 as const,
      exportedAt: this.clock.now().toISOString(),
      conversation: conversationView(row),
      messages: rows.slice(0, EXPORT_MAX_MESSAGES).map(messageView),
      truncated: rows.length > EXPORT_MAX_MESSAGES,
    };
  }

  /**
   * Edits a message's text (what later turns read as history). Refused (409) while a turn of the
   * conversation is running or waits: its stored state was built from the messages as they were.
   */
  async editMessage(
    principal: Principal,
    id: string,
    messageId: string,
    content: string,
  ): Promise<MessageView> {
    const message = await this.mustGetMessage(principal, id, messageId);
    await this.assertIdle(id);
    await this.store.updateMessage(id, messageId, content);
    await this.store.touchConversation(id, this.clock.now().toISOString());
    return { ...message, content };
  }

  /** Deletes a message (later turns no longer read it); refused (409) while a turn runs or waits. */
  async deleteMessage(principal: Principal, id: string, messageId: string): Promise<void> {
    await this.mustGetMessage(principal, id, messageId);
    await this.store.withConversationLocked(id, async (store) => {
      await this.assertIdle(id, store);
      await store.deleteMessage(id, messageId);
    });
  }

  /**
   * Resets a conversation: every message deleted, the conversation itself (title, metadata, its memory
   * blocks) kept, so the next turn starts afresh. Refused (409) while a turn runs or waits.
   */
  async resetMessages(principal: Principal, id: string): Promise<number> {
    const conversation = await this.mustGet(principal, id);
    return this.store.withConversationLocked(conversation.id, async (store) => {
      await this.assertIdle(conversation.id, store);
      const deleted = await store.clearMessages(conversation.id);
      await store.touchConversation(conversation.id, this.clock.now().toISOString());
      return deleted;
    });
  }

  private async mustGetMessage(principal: Principal, id: string, messageId: string): Promise<MessageView> {
    const conversation = await this.mustGet(principal, id);
    const row = await this.store
      .messagesQuery(conversation.id)
      .where('id', '=', messageId)
      .executeTakeFirst();
    if (!row) throw notFound('NOT_FOUND', 'Message', messageId);
    return messageView(row);
  }

  private async assertIdle(conversationId: string, store: AgentStore = this.store): Promise<void> {
    const active = await store.activeRun(conversationId);
    if (active)
      throw new AppError(
        'CONFLICT',
        `Run '${active.id}' of this conversation is ${active.status}: wait for it or cancel it`,
        {
          runId: active.id,
          status: active.status,
        },
      );
  }

  /** A new user's welcome: a conversation no agent holds yet, with one assistant message. */
  async welcome(accountId: string, userId: string, displayName: string) {
    const row = await this.insert(accountId, {
      agentId: null,
      userId,
      title: 'Welcome',
      metadata: { kind: 'welcome' },
    });
    const message = await this.addMessage(row.id, {
      role: 'assistant',
      content: `Welcome, ${displayName}! Your profile and your cart are ready. Ask me anything about our blends.`,
      steps: [],
      sources: [],
      usage: null,
    });
    return { conversationId: row.id, message };
  }
}
