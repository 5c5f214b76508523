import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { openRawSqlite, type RawSqlite, type RawStatement, type SqliteDriverName } from './sqlite-driver.js';
import type { Database, Dialect } from './types.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /** Answers when the database responds; used by /health. */
  ping(): Promise<boolean>;
  /**
   * SQLite only: a number that changes whenever another connection (another process, or another
   * handle on the same file) has committed a change since it was last read; this connection's
   * own writes leave it unchanged. Lets a cache of rows that this process invalidates itself on
   * its own writes know, cheaply and exactly, that no one else has written. Read once per
   * event-loop turn, so a write committed elsewhere shows from the next turn. Absent on PostgreSQL.
   */
  dataVersion?(): number;
  /** PostgreSQL only: the pool's counts, for the metrics. */
  pool?: { totalCount: number; idleCount: number; waitingCount: number };
  /** SQLite only: which driver holds the connection (see sqlite-driver.ts). */
  sqliteDriver?: SqliteDriverName;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://…` selects PostgreSQL; empty selects SQLite. */
  databaseUrl: string;
  /** Folder of the SQLite file (`platform.db`). `:memory:` keeps it in memory. */
  dataDir: string;
  /** PostgreSQL schema to use (created if missing); tests give each suite its own. */
  pgSchema?: string;
  pgPoolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl.startsWith('postgres')) return openPostgres(options);
  return openSqlite(options.dataDir);
}

/**
 * The database holds key hashes, sealed credentials and customer data: only the server's user may
 * read it. SQLite gives its WAL and shared-memory files the database file's mode, so the file is
 * created 0600 before SQLite opens it, and an older, wider one (with its companions) is tightened.
 */
function ownerOnly(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      chmodSync(f, 0o600);
    } catch {
      // Companions may not exist; a file this user may not change (another owner) is left as is.
    }
  }
}

async function openSqlite(dataDir: string): Promise<DatabaseHandle> {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    file = path.join(dataDir, 'platform.db');
    ownerOnly(file);
  }
  const raw = await openRawSqlite(file);
  raw.exec('pragma journal_mode = WAL');
  raw.exec('pragma synchronous = NORMAL');
  raw.exec('pragma busy_timeout = 5000');
  raw.exec('pragma foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  const select1 = raw.prepare('select 1');
  const dataVersionStatement = raw.prepare('pragma data_version');
  // Reading the version opens a read transaction (file locks, a few system calls): read it once
  // per event-loop turn. Requests answered in one turn see the database as that turn found it.
  let turnVersion: number | null = null;
  const dataVersion = () => {
    if (turnVersion === null) {
      turnVersion = (dataVersionStatement.get([]) as { data_version: number }).data_version;
      setImmediate(() => {
        turnVersion = null;
      });
    }
    return turnVersion;
  };
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      try {
        select1.get([]);
        return true;
      } catch {
        return false;
      }
    },
    dataVersion,
    sqliteDriver: raw.driver,
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every query anew; on a hot path that is most of the cost of a read.
 * Prepared statements are reusable, so keep the most recent ones by their SQL text.
 */
function withStatementCache(raw: RawSqlite, max = 500) {
  const cache = new Map<string, RawStatement>();
  return {
    close: () => raw.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = raw.prepare(text);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

async function openPostgres(options: DatabaseOptions): Promise<DatabaseHandle> {
  const schema = options.pgSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new Error(`Bad schema name ${schema}`);
  // pg loads only for PostgreSQL: the embedded default does not carry it in memory.
  const { default: pg } = await import('pg');
  // COUNT(*) and SUM() come back as bigint strings from pg; numbers stay within 2^53 here.
  pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.pgPoolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  return {
    db,
    dialect: 'postgres',
    pool,
    ping: async () => {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

/** True for a unique-constraint violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  // node:sqlite (Node 24) reports SQLite's extended result code: 2067 UNIQUE, 1555 PRIMARYKEY.
  if (code === 'ERR_SQLITE_ERROR') return errcode === 2067 || errcode === 1555;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
