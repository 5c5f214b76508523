import type { Kysely } from 'kysely';

// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The tools a Tool Agent's answer used, as Flowise keeps them on the message (JSON text).
  await db.schema.alterTable('flow_messages').addColumn('used_tools', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('flow_messages').dropColumn('used_tools').execute();
}
