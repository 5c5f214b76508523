import type { Kysely } from 'kysely';

/**
 * Remove Duplicates v2 across executions (n8n's "processed data"): the keys a node (or the whole
 * workflow, scope '') has seen, hashed, and for the incremental and date modes the highest value so far.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workflow_dedupe_keys')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_dedupe_keys_pk', ['workflow_id', 'scope', 'key_hash'])
    .execute();
  await db.schema
    .createTable('workflow_dedupe_latest')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_dedupe_latest_pk', ['workflow_id', 'scope', 'kind'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workflow_dedupe_latest').execute();
  await db.schema.dropTable('workflow_dedupe_keys').execute();
}
