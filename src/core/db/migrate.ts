import { type Migration, type MigrationResult, Migrator, PostgresAdapter, sql } from 'kysely';
import type { Db } from './database.js';

/** Migrations are named `YYYYMMDD_NNN_module_what` so their order is their creation order. */
export type MigrationSet = Record<string, Migration>;

/**
 * On PostgreSQL, Kysely looks for its bookkeeping tables in every schema unless told which:
 * a database holding another schema with them (a second deployment, another app) would make
 * it skip creating its own and fail. Pin them to the connection's current schema.
 */
async function migrationSchema(db: Db): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

export async function migrateToLatest(db: Db, migrations: MigrationSet): Promise<MigrationResult[]> {
  const schema = await migrationSchema(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Modules are written in parallel; a later-named migration may land before an earlier one.
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results ?? [];
}
