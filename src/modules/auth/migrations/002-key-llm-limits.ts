import { type Kysely, sql } from 'kysely';

// Keys gain the language-model gateway's limits: allowed models and a daily token budget.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('models', 'text', (c) => c.notNull().defaultTo(sql`'[]'`))
    .execute();
  // 1..1e9 fits a 32-bit integer, so PostgreSQL returns a number rather than a bigint string.
  await db.schema.alterTable('api_keys').addColumn('daily_token_budget', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('daily_token_budget').execute();
  await db.schema.alterTable('api_keys').dropColumn('models').execute();
}
