import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agent_responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    // The conversation up to this response (JSON chat messages, no instructions): what
    // `previous_response_id` continues from.
    .addColumn('messages', 'text', (c) => c.notNull())
    // The response object as answered (JSON), for `GET /v1/responses/{id}`.
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_responses').execute();
}
