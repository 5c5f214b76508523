import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { ClientConfig } from 'pg';
import { watchAvailability } from './availability.js';
import { ResilientPool } from './resilient-pool.js';
import { RetryingKysely } from './retrying-kysely.js';
import { openRawSqlite, type RawSqlite, type RawStatement, type SqliteDriverName } from './sqlite-driver.js';
import type { Database, Dialect } from './types.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /**
   * Whether the database answers, within `timeoutMs` (default 2 s); used by /health. False at once
   * while the database is known to be down, and on SQLite while its disk has no room left.
   */
  ping(timeoutMs?: number): Promise<boolean>;
  /** False from a lost connection until the database answers again (always true on SQLite). */
  available(): boolean;
  /**
   * Calls `listener` each time the database answers again after it was lost (PostgreSQL only):
   * work the fault interrupted is taken up then. Returns the unsubscribe function.
   */
  onRecovered(listener: () => void): () => void;
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

interface DatabaseOptions {
  /** `postgres://…` selects PostgreSQL; empty selects SQLite. */
  databaseUrl: string;
  /** Folder of the SQLite file (`platform.db`). `:memory:` keeps it in memory. */
  dataDir: string;
  /** PostgreSQL schema to use (created if missing); tests give each suite its own. */
  pgSchema?: string;
  pgPoolSize?: number;
  /** How long an operation waits for a connection (the server back, a free slot) before a 503. */
  waitMs?: number;
  /** PostgreSQL's statement_timeout for the platform's sessions; 0: none. */
  statementTimeoutMs?: number;
  /** Where the database going away and coming back is logged. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** Free bytes under which SQLite is reported down: its next write would fail with SQLITE_FULL. */
const MIN_FREE_BYTES = 256 * 1024;

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl.startsWith('postgres')) return openPostgres(options);
  return openSqlite(options.dataDir);
}

/** Whether the disk holding `dir` has room for SQLite's next writes; true where it cannot be told. */
function hasRoom(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize >= MIN_FREE_BYTES;
  } catch {
    return true;
  }
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
        return file === ':memory:' || hasRoom(dataDir);
      } catch {
        return false;
      }
    },
    available: () => true,
    onRecovered: () => () => undefined,
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
  const waitMs = options.waitMs ?? 5_000;
  const settings: ClientConfig = {
    connectionString: options.databaseUrl,
    connectionTimeoutMillis: waitMs,
    // A server that vanished without closing the socket (a network cut) is noticed.
    keepAlive: true,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  };
  const pool = new pg.Pool({ ...settings, max: options.pgPoolSize ?? 10 });
  const watch = watchAvailability(() => new pg.Client(settings), options.log);
  const resilient = new ResilientPool(pool, { waitMs, onFault: watch.fault });
  const db = new RetryingKysely<Database>(
    { dialect: new PostgresDialect({ pool: resilient as never }) },
    waitMs,
  );
  if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  return {
    db,
    dialect: 'postgres',
    pool,
    ping: (timeoutMs = 2_000) => (watch.available() ? watch.probe(timeoutMs) : Promise.resolve(false)),
    available: watch.available,
    onRecovered: watch.onRecovered,
    close: async () => {
      watch.close();
      await db.destroy();
    },
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
