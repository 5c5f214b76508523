/**
 * One SQLite connection, on Node's built-in `node:sqlite` or on the optional better-sqlite3 driver.
 *
 * `node:sqlite` runs the database wherever it can: it loads without a flag from Node 22.13 (23.4), and
 * the platform also needs `StatementSync#columns()` and `backup()` (23.11 and 23.8; some 22.x have them), so the choice is made
 * on those features, not on a version number. Everywhere else (Node 20, early 22) the native
 * better-sqlite3 runs it: an optionalDependency, so `npm install` on Node 22 and 24 succeeds without a
 * C/C++ toolchain; when it is missing where it is needed, opening a database says so (SqliteDriverMissing).
 * better-sqlite3 12 (the last major that builds for Node 20) also aborts the process on Node 24 (Node
 * 24's `ObjectWrap` removes an environment cleanup hook inside a GC callback: `Assertion failed: (env)
 * != nullptr`, WiseLibs/better-sqlite3#1515), one more reason never to pick it where `node:sqlite` works.
 * `PLATFORM_SQLITE_DRIVER=node|better` overrides the choice.
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

/** The error of a database that needs better-sqlite3 where it is not installed. */
export class SqliteDriverMissing extends Error {
  constructor(cause: unknown) {
    super(
      `SQLite on Node ${process.versions.node} needs the optional better-sqlite3 driver, which is not ` +
        'installed (it builds from source when no prebuilt binary is found, which needs a C/C++ toolchain ' +
        'and Python). Use Node 24 (its built-in node:sqlite runs the database), install the ' +
        'driver (`npm install better-sqlite3`), or set DATABASE_URL to a PostgreSQL database.',
      { cause },
    );
    this.name = 'SqliteDriverMissing';
  }
}

let builtIn: boolean | undefined;

/** Whether this Node's `node:sqlite` loads without a flag and has what the platform uses. */
export function nodeSqliteUsable(): boolean {
  if (builtIn !== undefined) return builtIn;
  try {
    // Synchronous and free when absent (Node 20, or 22.12 without --experimental-sqlite).
    const sqlite = process.getBuiltinModule?.('node:sqlite') as typeof import('node:sqlite') | undefined;
    builtIn =
      typeof sqlite?.backup === 'function' && typeof sqlite.StatementSync?.prototype?.columns === 'function';
  } catch {
    builtIn = false;
  }
  return builtIn;
}

export function sqliteDriverName(env: NodeJS.ProcessEnv = process.env): SqliteDriverName {
  const wanted = env.PLATFORM_SQLITE_DRIVER;
  if (wanted === 'node') return 'node:sqlite';
  if (wanted === 'better') return 'better-sqlite3';
  return nodeSqliteUsable() ? 'node:sqlite' : 'better-sqlite3';
}

/** better-sqlite3's constructor, loaded on first use; SqliteDriverMissing when it did not install. */
export async function loadBetterSqlite(): Promise<typeof import('better-sqlite3')> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (error) {
    const code = (error as { code?: string }).code;
    // Not installed (optional, skipped or failed), or installed without its compiled addon.
    if (
      code === 'ERR_MODULE_NOT_FOUND' ||
      code === 'MODULE_NOT_FOUND' ||
      /bindings|\.node\b/.test(String(error))
    )
      throw new SqliteDriverMissing(error);
    throw error;
  }
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
  const SQLite = await loadBetterSqlite();
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
