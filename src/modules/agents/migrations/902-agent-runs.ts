import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    // The conversation's end user: a customer token sees only its customer's runs.
    .addColumn('user_id', 'text')
    // queued | in_progress | requires_action | completed | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    // The turn's options (client tools, tool choice, response format) and its input message (JSON).
    .addColumn('options', 'text', (c) => c.notNull())
    // Where a paused turn stands (JSON), and the client tool calls it waits for (JSON).
    .addColumn('state', 'text')
    .addColumn('pending', 'text')
    // The answer's message id when completed; `{code, message}` (JSON) when failed.
    .addColumn('message_id', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_runs_account_idx')
    .on('agent_runs')
    .columns(['account_id', 'agent_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_runs').execute();
}
