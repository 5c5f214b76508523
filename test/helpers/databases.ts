import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/core/db/database.js';
import { type MigrationSet, migrateToLatest } from '../../src/core/db/migrate.js';
import { PG_URL, pooledSchemaPrefix, uniqueName } from './services.js';

/**
 * Fresh databases for test platforms without running every migration for each (docs/decisions.md, "CI
 * in phases", the follow-up on platform set-up). Migrating took most of a platform's set-up: about
 * 3 s on PostgreSQL and 0.2 s on SQLite at a load of 20, then 0.7 s to drop the schema.
 *
 * - SQLite: the migrations run once per process and migration set; each platform's in-memory
 *   database is then built from what they made (the schema's SQL, in order, and any rows).
 * - PostgreSQL: a closed platform's schema is emptied (every table but the migrations' own) and
 *   handed to the next platform of the process with the same migrations, after checking that its
 *   tables, columns, indexes and constraints are still what the migrations made; a schema a test
 *   changed is dropped instead. Emptying a few small tables costs milliseconds where `truncate` of
 *   all of them (new files for every table and index) cost seconds.
 *
 * The pooled schemas are named after the Vitest process (`tp_<pid>_…`, a worker's parent), whose
 * global teardown (test/helpers/global-setup.ts) drops them.
 */

const keyOf = (migrations: MigrationSet): string => Object.keys(migrations).sort().join('\n');

// On globalThis: the `unit` and `serial` projects reset modules per file inside one worker process,
// and the pool should outlive that.
interface State {
  sqlite: Map<string, Promise<SqliteImage>>;
  /** Per migration set: schemas free for the next platform, and each pooled schema's fingerprint. */
  pg: Map<string, { free: string[]; fingerprints: Map<string, string>; poolable: boolean }>;
}
const STATE = Symbol.for('api-platform.test-databases');
const holder = globalThis as Record<symbol, State | undefined>;
const state: State = holder[STATE] ?? { sqlite: new Map(), pg: new Map() };
holder[STATE] = state;

// ---------------------------------------------------------------------------------------------
// SQLite

interface SqliteImage {
  /** CREATE statements, tables first, each kind in the order SQLite recorded them. */
  schema: string[];
  rows: Array<{ table: string; columns: string[]; values: unknown[][] }>;
  userVersion: number;
}

async function captureSqlite(migrations: MigrationSet): Promise<SqliteImage> {
  const source = await openDatabase({ databaseUrl: '', dataDir: ':memory:' });
  try {
    await migrateToLatest(source.db, migrations);
    const { rows: objects } = await sql<{ type: string; name: string; sql: string }>`
      select type, name, sql from sqlite_master
      where sql is not null and name not like 'sqlite_%'
      order by case type when 'table' then 0 when 'index' then 1 else 2 end, rowid`.execute(source.db);
    const image: SqliteImage = { schema: objects.map((o) => o.sql), rows: [], userVersion: 0 };
    for (const { name } of objects.filter((o) => o.type === 'table')) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(
        source.db,
      );
      const [first] = rows;
      if (!first) continue;
      const columns = Object.keys(first);
      image.rows.push({ table: name, columns, values: rows.map((r) => columns.map((c) => r[c])) });
    }
    const { rows: version } = await sql<{ user_version: number }>`pragma user_version`.execute(source.db);
    image.userVersion = version[0]?.user_version ?? 0;
    return image;
  } finally {
    await source.close();
  }
}

/** An in-memory SQLite database holding what `migrations` make, as if they had just run on it. */
export async function freshSqlite(migrations: MigrationSet): Promise<DatabaseHandle> {
  const key = keyOf(migrations);
  let image = state.sqlite.get(key);
  if (!image) {
    image = captureSqlite(migrations);
    state.sqlite.set(key, image);
    // A failed capture is not kept: the next platform tries again (and shows the error).
    image.catch(() => state.sqlite.delete(key));
  }
  const { schema, rows, userVersion } = await image;
  const database = await openDatabase({ databaseUrl: '', dataDir: ':memory:' });
  try {
    await database.db.transaction().execute(async (trx) => {
      for (const statement of schema) await sql.raw(statement).execute(trx);
      for (const { table, columns, values } of rows) {
        const list = sql.join(columns.map((c) => sql.ref(c)));
        for (const row of values)
          await sql`insert into ${sql.table(table)} (${list}) values (${sql.join(row)})`.execute(trx);
      }
    });
    if (userVersion !== 0) await sql.raw(`pragma user_version = ${Number(userVersion)}`).execute(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/** A digest of everything in the schema that migrations make: a test that changed any of it fails the check. */
async function fingerprint(database: DatabaseHandle, schema: string): Promise<string> {
  const { rows } = await sql<{ fp: string }>`
    with ns as (select oid from pg_namespace where nspname = ${schema})
    select md5(coalesce(string_agg(x, E'\n' order by x), '')) as fp from (
      select 'r ' || c.relname || ' ' || c.relkind::text as x from pg_class c where c.relnamespace = (select oid from ns)
      union all
      select 'a ' || c.relname || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
        || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
      from pg_attribute a
        join pg_class c on c.oid = a.attrelid
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where c.relnamespace = (select oid from ns) and a.attnum > 0 and not a.attisdropped
      union all
      select 'i ' || pg_get_indexdef(i.indexrelid)
      from pg_index i join pg_class c on c.oid = i.indexrelid where c.relnamespace = (select oid from ns)
      union all
      select 'c ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = (select oid from ns)
      union all
      select 'f ' || p.oid::regprocedure::text from pg_proc p where p.pronamespace = (select oid from ns)
      union all
      select 't ' || t.tgname || ' ' || t.tgrelid::regclass::text
      from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where c.relnamespace = (select oid from ns) and not t.tgisinternal
      union all
      select 'y ' || typname from pg_type where typnamespace = (select oid from ns)
      union all
      select 'm ' || name from ${sql.table(`${schema}.kysely_migration`)}
    ) s`.execute(database.db);
  return rows[0]?.fp ?? '';
}

/** Whether any table but the migrations' own holds a row: such a schema cannot be emptied back to new. */
async function seeded(database: DatabaseHandle, schema: string): Promise<boolean> {
  const { rows: tables } = await sql<{ name: string }>`
    select tablename as name from pg_tables where schemaname = ${schema}`.execute(database.db);
  for (const { name } of tables) {
    if (MIGRATION_TABLES.includes(name)) continue;
    const { rows } = await sql<{ any: boolean }>`
      select exists (select 1 from ${sql.table(`${schema}.${name}`)}) as any`.execute(database.db);
    if (rows[0]?.any) return true;
  }
  return false;
}

export interface PostgresSchema {
  database: DatabaseHandle;
  schema: string;
  /** Empties the schema for the next platform, or drops it; closes the connection either way. */
  release(): Promise<void>;
}

/**
 * A PostgreSQL schema holding what `migrations` make and no rows: one of this process's emptied ones
 * when it has one, else a new one, migrated here.
 */
export async function postgresSchema(migrations: MigrationSet, poolSize: number): Promise<PostgresSchema> {
  const key = keyOf(migrations);
  let found = state.pg.get(key);
  if (!found) {
    found = { free: [], fingerprints: new Map(), poolable: true };
    state.pg.set(key, found);
  }
  const set = found;
  const reused = set.free.pop();
  const schema = reused ?? uniqueName(pooledSchemaPrefix());
  const database = await openDatabase({
    databaseUrl: PG_URL,
    dataDir: ':memory:',
    pgSchema: schema,
    pgPoolSize: poolSize,
  });
  const drop = async () => {
    set.fingerprints.delete(schema);
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db);
  };
  try {
    if (reused === undefined) {
      await migrateToLatest(database.db, migrations);
      if (set.poolable && (await seeded(database, schema))) set.poolable = false;
      if (set.poolable) set.fingerprints.set(schema, await fingerprint(database, schema));
    }
  } catch (error) {
    await drop().catch(() => undefined);
    await database.close();
    throw error;
  }
  return {
    database,
    schema,
    async release() {
      try {
        const expected = set.fingerprints.get(schema);
        if (!set.poolable || expected === undefined || (await fingerprint(database, schema)) !== expected) {
          await drop();
          return;
        }
        try {
          // Replication role "replica" skips the foreign-key triggers, so tables empty in any order.
          await sql
            .raw(`do $$ declare r record; begin
              set local lock_timeout = '5s';
              set local session_replication_role = replica;
              for r in select tablename from pg_tables where schemaname = '${schema}'
                and tablename not in (${MIGRATION_TABLES.map((t) => `'${t}'`).join(', ')}) loop
                execute format('delete from %I.%I', '${schema}', r.tablename);
              end loop;
            end $$`)
            .execute(database.db);
          set.free.push(schema);
        } catch {
          await drop();
        }
      } finally {
        await database.close();
      }
    },
  };
}
