import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../core/db/database.js';
import { lockRow } from '../../core/db/row-lock.js';
import type { Database } from '../../core/db/types.js';
import type { AgentMemoryBlocksTable, AgentMemoryEditsTable } from './tables.js';

export type BlockRow = AgentMemoryBlocksTable;
export type EditRow = AgentMemoryEditsTable;

/** Memory blocks and their edit history; blocks scoped to their account. */
export class MemoryStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The agent's blocks, and those of the scopes given (a conversation's, a user's); by label. */
  blocks(accountId: string, agentId: string, scopes: string[]): Promise<BlockRow[]> {
    return this.db
      .selectFrom('agent_memory_blocks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('scope', 'in', ['', ...scopes])
      .orderBy('scope')
      .orderBy('label')
      .execute();
  }

  countIn(agentId: string, scope: string): Promise<number> {
    return this.db
      .selectFrom('agent_memory_blocks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .where('scope', '=', scope)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  }

  get(accountId: string, agentId: string, id: string): Promise<BlockRow | undefined> {
    return this.db
      .selectFrom('agent_memory_blocks')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Inserts a block and its first edit, unless its label is taken in its scope or the scope holds
   * `maxBlocks` already. On the agent's locked row (a no-op update): creates racing each see the
   * others, so the bound holds and a taken label is an answer, not a unique-key failure.
   */
  async insert(row: BlockRow, edit: EditRow, maxBlocks: number): Promise<'created' | 'taken' | 'full'> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        await lockRow(trx, 'agents', row.agent_id);
        const taken = await trx
          .selectFrom('agent_memory_blocks')
          .select('id')
          .where('agent_id', '=', row.agent_id)
          .where('scope', '=', row.scope)
          .where('label', '=', row.label)
          .executeTakeFirst();
        if (taken) return 'taken';
        const count = await trx
          .selectFrom('agent_memory_blocks')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('agent_id', '=', row.agent_id)
          .where('scope', '=', row.scope)
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= maxBlocks) return 'full';
        await trx.insertInto('agent_memory_blocks').values(row).execute();
        await trx.insertInto('agent_memory_edits').values(edit).execute();
        return 'created';
      });
    } catch (error) {
      if (isUniqueViolation(error)) return 'taken';
      throw error;
    }
  }

  /**
   * Changes a block if its value is still `expected` (two edits racing: one wins, the other is told),
   * recording the edit; false when it changed meanwhile or is gone.
   */
  async update(
    id: string,
    expected: string,
    values: Pick<BlockRow, 'value' | 'char_limit' | 'description' | 'updated_at'>,
    edit: EditRow,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('agent_memory_blocks')
        .set(values)
        .where('id', '=', id)
        .where('value', '=', expected)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await trx.insertInto('agent_memory_edits').values(edit).execute();
      return true;
    });
  }

  async delete(accountId: string, agentId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('agent_memory_blocks')
        .where('account_id', '=', accountId)
        .where('agent_id', '=', agentId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await trx.deleteFrom('agent_memory_edits').where('block_id', '=', id).execute();
      return true;
    });
  }

  edits(blockId: string, limit: number): Promise<EditRow[]> {
    return this.db
      .selectFrom('agent_memory_edits')
      .selectAll()
      .where('block_id', '=', blockId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
}
