import { type Kysely, PostgresAdapter } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // Models made through Ollama's management API: a configured model under another name, with a preset.
  await db.schema
    .createTable('llm_models')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('spec', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('llm_blobs')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('data', postgres ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('llm_blobs').ifExists().execute();
  await db.schema.dropTable('llm_models').ifExists().execute();
}
