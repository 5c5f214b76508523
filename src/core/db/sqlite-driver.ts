/**
 * One SQLite connection, on better-sqlite3 or on Node's built-in `node:sqlite`.
 *
 * better-sqlite3 12 (the last major that builds for Node 20) aborts the process on Node 24: Node 24's
 * `ObjectWrap` removes an environment cleanup hook when a wrapped statement is collected, and the
 * check that hook removal makes fails inside a GC callback (`Assertion failed: (env) != nullptr` in
 * `RemoveEnvironmentCleanupHook`, WiseLibs/better-sqlite3#1515). better-sqlite3 13 fixes it but needs
 * Node 22. So Node 24 and later use `node:sqlite` (FTS5 included), Node 20 and 22 better-sqlite3,
 * which loads its native addon only when a connection opens. `PLATFORM_SQLITE_DRIVER=node|better`
 * overrides the choice (`node` needs Node 22.13 or later).
 */

/** Pages per backup step: all of them (node:sqlite refuses -1). */
const ONE_STEP = 0x7fffffff;

export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/** A prepared statement as Kysely's SQLite dialect uses it, plus `get`. */
export interface RawStatement {
  readonly reader: boolean;
  all(parameters: ReadonlyArray<unknown>): unknown[];
  get(parameters: ReadonlyArray<unknown>): unknown;
  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown>;
}

export interface RawSqlite {
  readonly driver: SqliteDriverName;
  prepare(sql: string): RawStatement;
  exec(sql: string): void;
  /** The first column of the first row (a pragma's value, a count). */
  scalar(sql: string): unknown;
  /**
   * An online copy of the database into `file` (SQLite's backup API), in one step: copied in pages,
   * it would start over at every write of another connection and might never end under load.
   */
  backup(file: string): Promise<void>;
  close(): void;
}

export function sqliteDriverName(env: NodeJS.ProcessEnv = process.env): SqliteDriverName {
  const wanted = env.PLATFORM_SQLITE_DRIVER;
  if (wanted === 'node') return 'node:sqlite';
  if (wanted === 'better') return 'better-sqlite3';
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 24 ? 'node:sqlite' : 'better-sqlite3';
}

export async function openRawSqlite(
  file: string,
  options: { readonly?: boolean; driver?: SqliteDriverName } = {},
): Promise<RawSqlite> {
  const driver = options.driver ?? sqliteDriverName();
  return driver === 'node:sqlite'
    ? openNodeSqlite(file, options.readonly ?? false)
    : openBetterSqlite(file, options.readonly ?? false);
}

async function openBetterSqlite(file: string, readonly: boolean): Promise<RawSqlite> {
  const { default: SQLite } = await import('better-sqlite3');
  const raw = new SQLite(file, readonly ? { readonly: true, fileMustExist: true } : {});
  return {
    driver: 'better-sqlite3',
    // better-sqlite3's statements take an array of positional parameters as they are.
    prepare: (sql) => raw.prepare(sql) as unknown as RawStatement,
    exec: (sql) => {
      raw.exec(sql);
    },
    scalar: (sql) => raw.prepare(sql).pluck().get(),
    backup: async (target) => {
      await raw.backup(target, { progress: () => ONE_STEP });
    },
    close: () => raw.close(),
  };
}

async function openNodeSqlite(file: string, readonly: boolean): Promise<RawSqlite> {
  const sqlite = await import('node:sqlite');
  const raw = new sqlite.DatabaseSync(file, readonly ? { readOnly: true } : {});
  return {
    driver: 'node:sqlite',
    prepare(sql) {
      const statement = raw.prepare(sql);
      // node:sqlite spreads positional parameters; a statement that returns columns is a reader.
      const params = (p: ReadonlyArray<unknown>) => p as Array<null | number | bigint | string | Uint8Array>;
      return {
        reader: statement.columns().length > 0,
        all: (p) => statement.all(...params(p)),
        get: (p) => statement.get(...params(p)),
        run: (p) => statement.run(...params(p)),
        iterate: (p) => statement.iterate(...params(p)) as IterableIterator<unknown>,
      };
    },
    exec: (sql) => raw.exec(sql),
    scalar: (sql) => {
      const row = raw.prepare(sql).get() as Record<string, unknown> | undefined;
      return row ? Object.values(row)[0] : undefined;
    },
    backup: async (target) => {
      await sqlite.backup(raw, target, { rate: ONE_STEP });
    },
    close: () => raw.close(),
  };
}
