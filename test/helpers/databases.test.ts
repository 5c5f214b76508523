import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/core/db/database.js';
import { openDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import { allMigrations, allModules } from '../../src/modules/index.js';
import { freshSqlite, postgresSchema } from './databases.js';
import { PG_URL, postgresAvailable, uniqueName } from './services.js';

/**
 * The test platforms' databases (databases.ts) are what the migrations make, with no rows but theirs:
 * compared here with a database the migrations just ran on.
 */
const migrations = allMigrations(allModules);

async function sqliteContents(database: DatabaseHandle): Promise<unknown> {
  const { rows: objects } = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
    select type, name, tbl_name, sql from sqlite_master order by type, name`.execute(database.db);
  const rows: Record<string, unknown[]> = {};
  for (const o of objects.filter((x) => x.type === 'table'))
    rows[o.name] = (
      await sql<Record<string, unknown>>`select * from ${sql.table(o.name)}`.execute(database.db)
    ).rows;
  // When each migration ran differs; which ran does not.
  rows.kysely_migration = (rows.kysely_migration ?? []).map((r) => (r as { name: string }).name);
  const version = (await sql`pragma user_version`.execute(database.db)).rows;
  return { objects, rows, version };
}

describe('SQLite: a platform database built from the migrations once', () => {
  it('has the schema and rows of a freshly migrated one, and each is its own', async () => {
    const migrated = await openDatabase({ databaseUrl: '', dataDir: ':memory:' });
    await migrateToLatest(migrated.db, migrations);
    const first = await freshSqlite(migrations);
    const second = await freshSqlite(migrations);
    try {
      const expected = await sqliteContents(migrated);
      expect(await sqliteContents(first)).toEqual(expected);
      expect((expected as { rows: Record<string, unknown[]> }).rows.kysely_migration).toHaveLength(
        Object.keys(migrations).length,
      );
      await sql`insert into accounts (id, email, name, created_at) values ('a1', 'a@x', 'A', '2026')`.execute(
        first.db,
      );
      expect(await sqliteContents(second)).toEqual(expected);
      // Nothing left to run: the migrator agrees.
      expect(await migrateToLatest(second.db, migrations)).toEqual([]);
    } finally {
      await Promise.all([migrated.close(), first.close(), second.close()]);
    }
  });
});

describe.skipIf(!(await postgresAvailable()))('PostgreSQL: a schema emptied and reused', () => {
  const reference = uniqueName('t');
  let migrated: DatabaseHandle;
  afterAll(async () => {
    await sql`drop schema if exists ${sql.id(reference)} cascade`.execute(migrated.db);
    await migrated.close();
  });

  const catalogue = async (database: DatabaseHandle, schema: string) =>
    (
      await sql<{ t: string; c: string; ty: string; n: boolean; d: string | null }>`
        select c.table_name as t, c.column_name as c, c.data_type as ty, c.is_nullable = 'YES' as n,
          c.column_default as d
        from information_schema.columns c where c.table_schema = ${schema}
        order by 1, 2`.execute(database.db)
    ).rows;
  const indexes = async (database: DatabaseHandle, schema: string) =>
    (
      await sql<{ d: string }>`select replace(indexdef, ${`${schema}.`}, '') as d from pg_indexes
        where schemaname = ${schema} order by 1`.execute(database.db)
    ).rows;

  it('hands the next platform the schema empty, as the migrations left it', async () => {
    migrated = await openDatabase({ databaseUrl: PG_URL, dataDir: ':memory:', pgSchema: reference });
    await migrateToLatest(migrated.db, migrations);
    const first = await postgresSchema(migrations, 2);
    await sql`insert into accounts (id, email, name, created_at) values ('a1', 'a@x', 'A', '2026')`.execute(
      first.database.db,
    );
    await first.release();
    const second = await postgresSchema(migrations, 2);
    try {
      expect(second.schema).toBe(first.schema);
      expect(await catalogue(second.database, second.schema)).toEqual(await catalogue(migrated, reference));
      expect(await indexes(second.database, second.schema)).toEqual(await indexes(migrated, reference));
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from accounts`.execute(
        second.database.db,
      );
      expect(rows[0]?.n).toBe(0);
      expect(await migrateToLatest(second.database.db, migrations)).toEqual([]);
    } finally {
      await second.release();
    }
  });

  it('drops a schema a test changed instead of handing it on', async () => {
    const changed = await postgresSchema(migrations, 2);
    await sql`alter table accounts add column extra text`.execute(changed.database.db);
    await changed.release();
    const next = await postgresSchema(migrations, 2);
    try {
      expect(next.schema).not.toBe(changed.schema);
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_namespace where nspname = ${changed.schema}`.execute(
        next.database.db,
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      await next.release();
    }
  });
});
