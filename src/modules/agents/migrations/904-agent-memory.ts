import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_memory_blocks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    // '' for the agent's own blocks, else the conversation the block belongs to (a unique key needs no null).
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('char_limit', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('agent_memory_blocks_label_uq', ['agent_id', 'scope', 'label'])
    .execute();

  await db.schema
    .createTable('agent_memory_edits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('block_id', 'text', (c) => c.notNull())
    // create | update | append | replace
    .addColumn('op', 'text', (c) => c.notNull())
    // api (a key) or agent (its memory tools, in a turn)
    .addColumn('by', 'text', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_memory_edits_block_idx')
    .on('agent_memory_edits')
    .columns(['block_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_memory_edits').execute();
  await db.schema.dropTable('agent_memory_blocks').execute();
}
