import type { Kysely } from 'kysely';

/**
 * n8n's execution annotation tags: an execution carries tags of its account (the same tags as its
 * workflows, `workflow_tags`). Deleting the execution or the tag removes the link; renaming a tag
 * changes its id (derived from the name), which the link follows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('execution_tags')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull().references('executions.id').onDelete('cascade'))
    .addColumn('tag_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('execution_tags_pk', ['execution_id', 'tag_id'])
    .addForeignKeyConstraint(
      'execution_tags_tag_fk',
      ['account_id', 'tag_id'],
      'workflow_tags',
      ['account_id', 'id'],
      (fk) => fk.onDelete('cascade').onUpdate('cascade'),
    )
    .execute();
  // The list's tag filter reads the links of one tag.
  await db.schema
    .createIndex('execution_tags_tag_idx')
    .on('execution_tags')
    .columns(['account_id', 'tag_id', 'execution_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('execution_tags').execute();
}
