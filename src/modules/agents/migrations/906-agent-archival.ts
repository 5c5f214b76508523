import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_archival_passages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    // '' for the agent's own passages, 'conversation:<id>' or 'user:<id>' for one conversation's or user's.
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    // The knowledge base's document that holds the text (its topic is the scope's), one per passage.
    .addColumn('document_id', 'text', (c) => c.notNull().unique())
    // api (a key) or agent (its archival_memory_insert tool, in a turn)
    .addColumn('by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_archival_passages_agent_idx')
    .on('agent_archival_passages')
    .columns(['account_id', 'agent_id', 'scope', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_archival_passages').execute();
}
