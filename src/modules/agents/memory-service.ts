import type { Clock } from '../../core/clock.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { BlockRow, EditRow, MemoryStore } from './memory-store.js';

/** A block's characters when none is set, and the most any block may hold. */
export const DEFAULT_BLOCK_LIMIT = 2_000;
export const MAX_BLOCK_LIMIT = 20_000;
/** Blocks per agent, and per conversation of an agent. */
const MAX_BLOCKS = 20;

export interface BlockView {
  id: string;
  agentId: string;
  conversationId: string | null;
  userId: string | null;
  label: string;
  description: string | null;
  value: string;
  limit: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A block's scope: '' the agent's (every turn), a conversation id (that conversation's turns), or
 * `user:<id>` (every conversation of that user with the agent, Letta's per-user "human" block).
 */
const USER_SCOPE = 'user:';
const userScope = (userId: string) => `${USER_SCOPE}${userId}`;
const userOfScope = (scope: string) => (scope.startsWith(USER_SCOPE) ? scope.slice(USER_SCOPE.length) : null);
const scopesOf = (conversationId: string | null, userId: string | null) => [
  ...(conversationId ? [conversationId] : []),
  ...(userId ? [userScope(userId)] : []),
];
/** Which block of a label a turn reads: the conversation's, then the user's, then the agent's. */
const precedence = (scope: string) => (scope === '' ? 0 : scope.startsWith(USER_SCOPE) ? 1 : 2);

const view = (row: BlockRow): BlockView => ({
  id: row.id,
  agentId: row.agent_id,
  conversationId: row.scope === '' || row.scope.startsWith(USER_SCOPE) ? null : row.scope,
  userId: userOfScope(row.scope),
  label: row.label,
  description: row.description,
  value: row.value,
  limit: row.char_limit,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const tooLong = (field: string, length: number, limit: number) =>
  validationError('Memory block over its limit', [
    { field, message: `is ${length} characters; the block holds at most ${limit}` },
  ]);

/**
 * Memory blocks (Letta's core memory): named texts per agent, per user and per conversation, each with a
 * character limit, read into every turn's system prompt and edited through the API or by the agent's
 * memory tools; every change is an edit in the block's history.
 */
export class MemoryService {
  constructor(
    private readonly store: MemoryStore,
    private readonly clock: Clock,
  ) {}

  async list(
    accountId: string,
    agentId: string,
    conversationId: string | null,
    userId: string | null = null,
  ): Promise<BlockView[]> {
    return (await this.store.blocks(accountId, agentId, scopesOf(conversationId, userId))).map(view);
  }

  async get(accountId: string, agentId: string, id: string): Promise<BlockView> {
    return view(await this.mustGet(accountId, agentId, id));
  }

  async create(
    accountId: string,
    agentId: string,
    body: {
      label: string;
      value?: string;
      limit?: number;
      description?: string;
      conversationId?: string;
      userId?: string;
    },
  ): Promise<BlockView> {
    const limit = body.limit ?? DEFAULT_BLOCK_LIMIT;
    const value = body.value ?? '';
    if (value.length > limit) throw tooLong('value', value.length, limit);
    if (body.conversationId !== undefined && body.userId !== undefined)
      throw validationError('A block belongs to one scope', [
        { field: 'userId', message: 'cannot be given with conversationId' },
      ]);
    const scope = body.conversationId ?? (body.userId !== undefined ? userScope(body.userId) : '');
    if ((await this.store.countIn(agentId, scope)) >= MAX_BLOCKS) throw blocksFull();
    const now = this.clock.now().toISOString();
    const row: BlockRow = {
      id: newId('mem'),
      account_id: accountId,
      agent_id: agentId,
      scope,
      label: body.label,
      description: body.description ?? null,
      value,
      char_limit: limit,
      created_at: now,
      updated_at: now,
    };
    const outcome = await this.store.insert(
      row,
      this.edit(row.id, 'create', 'api', null, value, now),
      MAX_BLOCKS,
    );
    if (outcome === 'taken')
      throw new AppError('NAME_TAKEN', `A memory block '${body.label}' exists here already`, {
        label: body.label,
      });
    if (outcome === 'full') throw blocksFull();
    return view(row);
  }

  async patch(
    accountId: string,
    agentId: string,
    id: string,
    body: { value?: string; limit?: number; description?: string | null },
  ): Promise<BlockView> {
    const row = await this.mustGet(accountId, agentId, id);
    const limit = body.limit ?? row.char_limit;
    const value = body.value ?? row.value;
    if (value.length > limit)
      throw tooLong(body.value !== undefined ? 'value' : 'limit', value.length, limit);
    const now = this.clock.now().toISOString();
    const values = {
      value,
      char_limit: limit,
      description: body.description !== undefined ? body.description : row.description,
      updated_at: now,
    };
    if (
      !(await this.store.update(
        row.id,
        row.value,
        values,
        this.edit(row.id, 'update', 'api', row.value, value, now),
      ))
    )
      throw new AppError('CONFLICT', `Memory block '${id}' changed meanwhile; read it again`, { id });
    return view({ ...row, ...values });
  }

  async delete(accountId: string, agentId: string, id: string): Promise<void> {
    if (!(await this.store.delete(accountId, agentId, id))) throw notFound('NOT_FOUND', 'Memory block', id);
  }

  async history(accountId: string, agentId: string, id: string) {
    await this.mustGet(accountId, agentId, id);
    return (await this.store.edits(id, 100)).map((e) => ({
      id: e.id,
      op: e.op,
      by: e.by,
      before: e.before,
      after: e.after,
      createdAt: e.created_at,
    }));
  }

  /**
   * The agent's memory tools: appends to or replaces text in the block of `label` (the
   * conversation's block before the agent's). Failures are thrown as plain errors: the model reads them.
   */
  async agentEdit(
    accountId: string,
    agentId: string,
    conversationId: string | null,
    edit: { label: string } & ({ op: 'append'; text: string } | { op: 'replace'; old: string; text: string }),
    userId: string | null = null,
  ): Promise<{ label: string; value: string }> {
    const blocks = await this.store.blocks(accountId, agentId, scopesOf(conversationId, userId));
    const row = blocks
      .filter((b) => b.label === edit.label)
      .sort((a, b) => precedence(b.scope) - precedence(a.scope))[0];
    if (!row)
      throw new Error(`no memory block '${edit.label}': ${blocks.map((b) => b.label).join(', ') || 'none'}`);
    let value: string;
    if (edit.op === 'append') value = row.value === '' ? edit.text : `${row.value}\n${edit.text}`;
    else {
      if (edit.old === '' || !row.value.includes(edit.old))
        throw new Error(`the block '${edit.label}' does not contain the text to replace`);
      value = row.value.replace(edit.old, edit.text);
    }
    if (value.length > row.char_limit)
      throw new Error(
        `the block '${edit.label}' would hold ${value.length} characters; its limit is ${row.char_limit}`,
      );
    const now = this.clock.now().toISOString();
    const values = { value, char_limit: row.char_limit, description: row.description, updated_at: now };
    if (
      !(await this.store.update(
        row.id,
        row.value,
        values,
        this.edit(row.id, edit.op, 'agent', row.value, value, now),
      ))
    )
      throw new Error(`the block '${edit.label}' changed meanwhile; try again`);
    return { label: row.label, value };
  }

  private async mustGet(accountId: string, agentId: string, id: string): Promise<BlockRow> {
    const row = await this.store.get(accountId, agentId, id);
    if (!row) throw notFound('NOT_FOUND', 'Memory block', id);
    return row;
  }

  private edit(
    blockId: string,
    op: string,
    by: string,
    before: string | null,
    after: string,
    at: string,
  ): EditRow {
    return { id: newId('medit'), block_id: blockId, op, by, before, after, created_at: at };
  }
}

/**
 * The blocks as the system prompt carries them: of one label, the conversation's block hides the
 * user's, which hides the agent's.
 */
export function memoryPrompt(blocks: BlockView[]): string {
  const rank = (b: BlockView) => (b.conversationId !== null ? 2 : b.userId !== null ? 1 : 0);
  const shown = new Map<string, BlockView>();
  for (const b of blocks) {
    const held = shown.get(b.label);
    if (!held || rank(b) > rank(held)) shown.set(b.label, b);
  }
  if (shown.size === 0) return '';
  const parts = [...shown.values()].map(
    (b) =>
      `<${b.label} characters="${b.value.length}/${b.limit}">${b.description ? `\n(${b.description})` : ''}\n${b.value}\n</${b.label}>`,
  );
  return `Your memory blocks (edit them with memory_append and memory_replace to remember what matters):\n<memory>\n${parts.join('\n')}\n</memory>`;
}

const blocksFull = () =>
  new AppError('CONFLICT', `At most ${MAX_BLOCKS} memory blocks per agent, per conversation and per user`);
