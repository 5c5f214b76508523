import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresAvailable, uniqueName } from '../../../test/helpers/services.js';
import { type DatabaseHandle, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const migrations = {
  '20260101_001_probe': {
    up: async (db: Parameters<typeof migrateToLatest>[0]) => {
      await db.schema
        .createTable('probe')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .execute();
    },
  },
} as unknown as Parameters<typeof migrateToLatest>[1];

describe.skipIf(!(await postgresAvailable()))('migrations on PostgreSQL schemas', () => {
  const handles: DatabaseHandle[] = [];
  const schemas: string[] = [];
  afterAll(async () => {
    const [first] = handles;
    if (first)
      for (const s of schemas) await sql`drop schema if exists ${sql.id(s)} cascade`.execute(first.db);
    for (const h of handles) await h.close();
  });

  const open = async (schema: string) => {
    schemas.push(schema);
    const handle = await openDatabase({
      databaseUrl: PG_URL,
      dataDir: ':memory:',
      pgSchema: schema,
      pgPoolSize: 2,
    });
    handles.push(handle);
    return handle;
  };

  it('a schema migrates on its own although another schema of the database already did', async () => {
    const a = await open(uniqueName('mig'));
    expect((await migrateToLatest(a.db, migrations)).map((r) => r.status)).toEqual(['Success']);
    const b = await open(uniqueName('mig'));
    expect((await migrateToLatest(b.db, migrations)).map((r) => r.status)).toEqual(['Success']);
    // Each schema has its own tables and bookkeeping; a second run is a no-op.
    expect(await migrateToLatest(b.db, migrations)).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
      where table_schema in (${schemas[0]}, ${schemas[1]}) and table_name in ('probe', 'kysely_migration')`.execute(
      a.db,
    );
    expect(rows[0]?.n).toBe(4);
  });
});
