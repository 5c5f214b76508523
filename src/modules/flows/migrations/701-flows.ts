import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // The validated definition (JSON): read whole on every prediction, never queried by field.
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('flows_account_idx')
    .on('flows')
    .columns(['account_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('flow_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('chat_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('memory_type', 'text')
    .addColumn('source_documents', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // Memory reads the newest turns of one session; the message list filters by chat or session.
  await db.schema
    .createIndex('flow_messages_session_idx')
    .on('flow_messages')
    .columns(['flow_id', 'session_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('flow_messages_chat_idx')
    .on('flow_messages')
    .columns(['flow_id', 'chat_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('flow_messages').execute();
  await db.schema.dropTable('flows').execute();
}
