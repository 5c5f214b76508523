import { type Migration, type MigrationResult, Migrator } from 'kysely';
import type { Db } from './database.js';

/** Migrations are named `YYYYMMDD_NNN_module_what` so their order is their creation order. */
export type MigrationSet = Record<string, Migration>;

export async function migrateToLatest(db: Db, migrations: MigrationSet): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Modules are written in parallel; a later-named migration may land before an earlier one.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results ?? [];
}
