import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Database } from '../../core/db/types.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { IngestInput, KnowledgeSearch } from '../documents/index.js';
import type { AgentArchivalPassagesTable } from './tables.js';

type PassageRow = AgentArchivalPassagesTable;

/** The most characters one passage holds. */
export const MAX_PASSAGE_CHARS = 10_000;

/** Whose passage it is: the agent's (every conversation reads it), one conversation's or one user's. */
export interface ArchivalScope {
  conversationId?: string | null;
  userId?: string | null;
}

/** Who pays for the embeddings: the key that asked, or the account alone. */
export interface ArchivalPayer {
  accountId: string;
  keyId: string | null;
}

/** What archival memory uses of the knowledge base (the documents module's API, wired in index.ts). */
export interface ArchivalKnowledge {
  ingest(payer: ArchivalPayer, input: IngestInput): Promise<{ documentId: string }>;
  query: KnowledgeSearch['query'];
  deleteDocument(accountId: string, documentId: string): Promise<void>;
}

export interface PassageView {
  id: string;
  agentId: string;
  conversationId: string | null;
  userId: string | null;
  text: string;
  by: string;
  createdAt: string;
  /** The search's score (search answers only). */
  score?: number;
}

const scopeOf = (scope: ArchivalScope): string =>
  scope.conversationId ? `conversation:${scope.conversationId}` : scope.userId ? `user:${scope.userId}` : '';

/**
 * The knowledge topic of a scope: one per agent and scope, so a search reads only the scopes it
 * names. User ids may hold any character, so theirs is a digest.
 */
export function archivalTopic(agentId: string, scope: string): string {
  if (scope === '') return `agent-archival:${agentId}`;
  if (scope.startsWith('conversation:'))
    return `agent-archival:${agentId}/c/${scope.slice('conversation:'.length)}`;
  const digest = createHash('sha256').update(scope.slice('user:'.length)).digest('hex').slice(0, 32);
  return `agent-archival:${agentId}/u/${digest}`;
}

const view = (row: PassageRow): PassageView => ({
  id: row.id,
  agentId: row.agent_id,
  conversationId: row.scope.startsWith('conversation:') ? row.scope.slice('conversation:'.length) : null,
  userId: row.scope.startsWith('user:') ? row.scope.slice('user:'.length) : null,
  text: row.text,
  by: row.by,
  createdAt: row.created_at,
});

/**
 * Archival memory (Letta's long-term memory): passages an agent (or the API) inserts and searches,
 * each held by the knowledge base as a document of the scope's topic (hybrid search) and listed
 * here with its scope, per agent and account.
 */
export class ArchivalMemory {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly knowledge: ArchivalKnowledge,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores a passage; the same text again in the same scope is the stored passage (`created: false`).
   * `by` says who wrote it: `api` or `agent`.
   */
  async insert(
    payer: ArchivalPayer,
    agentId: string,
    scope: ArchivalScope,
    text: string,
    by: 'api' | 'agent',
  ): Promise<{ created: boolean; passage: PassageView }> {
    const content = text.trim();
    if (content === '') throw validationError('Empty passage', [{ field: 'text', message: 'is empty' }]);
    if (content.length > MAX_PASSAGE_CHARS)
      throw validationError('Passage too long', [
        { field: 'text', message: `is ${content.length} characters; at most ${MAX_PASSAGE_CHARS}` },
      ]);
    const accountId = payer.accountId;
    const key = scopeOf(scope);
    const { documentId } = await this.knowledge.ingest(payer, {
      source: 'text',
      content,
      title: `Archival memory of ${agentId}`,
      topic: archivalTopic(agentId, key),
      metadata: { agentId, archival: true, ...(key ? { scope: key } : {}) },
    });
    const existing = await this.byDocument(accountId, documentId);
    if (existing) return { created: false, passage: view(existing) };
    const row: PassageRow = {
      id: newId('psg'),
      account_id: accountId,
      agent_id: agentId,
      scope: key,
      text: content,
      document_id: documentId,
      by,
      created_at: this.clock.now().toISOString(),
    };
    try {
      await this.db.insertInto('agent_archival_passages').values(row).execute();
    } catch (error) {
      // The same text inserted twice at once: the other insert won.
      const winner = await this.byDocument(accountId, documentId);
      if (winner) return { created: false, passage: view(winner) };
      throw error;
    }
    return { created: true, passage: view(row) };
  }

  /** Passages of the agent and of the scopes named, newest first (or oldest, `asc`). */
  async list(
    accountId: string,
    agentId: string,
    scope: ArchivalScope,
    page: { limit: number; order?: 'asc' | 'desc'; cursor?: string },
  ): Promise<{ data: PassageView[]; nextCursor: string | null }> {
    let q = this.db
      .selectFrom('agent_archival_passages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('scope', 'in', this.scopes(scope));
    const asc = page.order === 'asc';
    if (page.cursor) q = q.where('id', asc ? '>' : '<', page.cursor);
    const rows = await q
      .orderBy('id', asc ? 'asc' : 'desc')
      .limit(page.limit + 1)
      .execute();
    const more = rows.length > page.limit;
    const data = rows.slice(0, page.limit).map(view);
    return { data, nextCursor: more ? (data.at(-1)?.id ?? null) : null };
  }

  /** The passages that best match `query` among the agent's and the scopes named, best first. */
  async search(
    payer: ArchivalPayer,
    agentId: string,
    scope: ArchivalScope,
    query: string,
    topK: number,
  ): Promise<PassageView[]> {
    const accountId = payer.accountId;
    const scopes = this.scopes(scope);
    const { results } = await this.knowledge.query(accountId, {
      payerKeyId: payer.keyId,
      query: query.slice(0, 4_000),
      // A long passage is several chunks: ask for more, one answer per passage.
      topK: Math.min(topK * 3, 200),
      topics: scopes.map((s) => archivalTopic(agentId, s)),
      mode: 'hybrid',
    });
    const best = new Map<string, number>();
    for (const r of results) if (!best.has(r.documentId)) best.set(r.documentId, r.score);
    if (best.size === 0) return [];
    const rows = await this.db
      .selectFrom('agent_archival_passages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('scope', 'in', scopes)
      .where('document_id', 'in', [...best.keys()])
      .execute();
    return rows
      .map((row) => ({ ...view(row), score: best.get(row.document_id) ?? 0 }))
      .sort((a, b) => b.score - a.score)
      .slice(0, topK);
  }

  async get(accountId: string, agentId: string, id: string): Promise<PassageView> {
    return view(await this.mustGet(accountId, agentId, id));
  }

  /** Deletes a passage and its document. */
  async delete(accountId: string, agentId: string, id: string): Promise<void> {
    const row = await this.mustGet(accountId, agentId, id);
    await this.db.deleteFrom('agent_archival_passages').where('id', '=', row.id).execute();
    await this.knowledge.deleteDocument(accountId, row.document_id).catch((error: unknown) => {
      // Already gone (deleted through the documents API): nothing is left to find.
      if (!(error instanceof AppError && error.status === 404)) throw error;
    });
  }

  private scopes(scope: ArchivalScope): string[] {
    const scopes = [''];
    if (scope.conversationId) scopes.push(`conversation:${scope.conversationId}`);
    if (scope.userId) scopes.push(`user:${scope.userId}`);
    return scopes;
  }

  private byDocument(accountId: string, documentId: string): Promise<PassageRow | undefined> {
    return this.db
      .selectFrom('agent_archival_passages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
  }

  private async mustGet(accountId: string, agentId: string, id: string): Promise<PassageRow> {
    const row = await this.db
      .selectFrom('agent_archival_passages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('NOT_FOUND', 'Archival passage', id);
    return row;
  }
}
