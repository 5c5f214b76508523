import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../config.js';
import {
  loadBetterSqlite,
  openRawSqlite,
  type SqliteDriverName,
  sqliteDriverName,
} from '../core/db/sqlite-driver.js';

type Print = (line: string) => void;

export interface BackupCommandOptions {
  /** Default: loadConfig() (the environment and `.env`, as the server reads them). */
  config?: Config;
  print?: Print;
}

/** Kysely's bookkeeping table: a database without it is not the platform's. */
const MIGRATION_TABLE = 'kysely_migration';
const SQLITE_HEADER = 'SQLite format 3\0';

const stdout: Print = (line) => process.stdout.write(`${line}\n`);

/** A refusal the operator can act on: printed as is, with its exit code. */
class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

function databaseFile(config: Config): string {
  if (config.DATA_DIR === ':memory:')
    throw new CommandError('DATA_DIR is :memory:: there is no database file', 2);
  return path.join(config.DATA_DIR, 'platform.db');
}

/** The DATABASE_URL without its password, and its database's name, for the advice. */
function describeUrl(databaseUrl: string): { url: string; database: string } {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return {
      url: url.toString(),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default)',
    };
  } catch {
    return { url: '(DATABASE_URL)', database: '(from DATABASE_URL)' };
  }
}

function postgresAdvice(config: Config, file: string, print: Print): number {
  const { url, database } = describeUrl(config.DATABASE_URL);
  print(`The database is PostgreSQL (${url}): back it up and restore it with PostgreSQL's own tools.`);
  print(`  backup:  pg_dump --format=custom --file ${JSON.stringify(file)} --dbname "$DATABASE_URL"`);
  print(
    `  restore: pg_restore --clean --if-exists --no-owner --dbname "$DATABASE_URL" ${JSON.stringify(file)}`,
  );
  print(`  (database: ${database}; pg_dump takes a consistent snapshot while the server runs.)`);
  print('Then run `platform migrate`. See docs/operations.md.');
  return 2;
}

function encryptionKeyReminder(config: Config, print: Print): void {
  if (config.ENCRYPTION_KEY) return;
  print(
    `Stored credentials are sealed with ${path.join(config.DATA_DIR, 'encryption.key')}: ` +
      'keep it with the backup (and restore it with the database), or they cannot be read.',
  );
}

/**
 * Checks that `file` is a whole SQLite database holding the platform's migration table; returns
 * the number of migrations it has run. Throws a CommandError naming what is wrong.
 */
async function checkPlatformDatabase(file: string): Promise<number> {
  if (!existsSync(file)) throw new CommandError(`${file}: no such file`);
  if (!statSync(file).isFile()) throw new CommandError(`${file}: not a file`);
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1') !== SQLITE_HEADER) throw new CommandError(`${file}: not a SQLite database`);
  let db: Awaited<ReturnType<typeof openRawSqlite>> | undefined;
  try {
    db = await openRawSqlite(file, { readonly: true });
    const check = db.scalar('pragma quick_check');
    if (check !== 'ok') throw new CommandError(`${file}: the SQLite database is damaged (${String(check)})`);
    const tables = db.scalar(
      `select count(*) from sqlite_master where type = 'table' and name = '${MIGRATION_TABLE}'`,
    );
    if (Number(tables) === 0)
      throw new CommandError(
        `${file}: a SQLite database, but not the platform's (no ${MIGRATION_TABLE} table)`,
      );
    return Number(db.scalar(`select count(*) from ${MIGRATION_TABLE}`));
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(`${file}: cannot be read as a SQLite database (${(error as Error).message})`);
  } finally {
    db?.close();
  }
}

/** Pages per backup step: all of them, in one step (see copyDatabase). */
const ONE_STEP = 0x7fffffff;

/**
 * SQLite's online backup of the database in `source` into `target`, on the driver the server uses
 * (sqlite-driver.ts). The whole database is copied in one step: in small steps, every write another
 * connection commits in between restarts the copy, which under steady writes never ends; one step
 * holds a read transaction, and WAL lets writers go on meanwhile.
 */
async function onlineBackup(
  driver: SqliteDriverName,
  source: string,
  target: string,
  readonly: boolean,
): Promise<void> {
  if (driver === 'node:sqlite') {
    const sqlite = await import('node:sqlite');
    const db = new sqlite.DatabaseSync(source, { readOnly: readonly });
    try {
      db.exec('pragma busy_timeout = 5000');
      // node:sqlite takes `{rate}` (pages per step); the platform's declaration of it omits options.
      const backup = sqlite.backup as (
        s: typeof db,
        path: string,
        options: { rate: number },
      ) => Promise<number>;
      await backup(db, target, { rate: ONE_STEP });
    } finally {
      db.close();
    }
    return;
  }
  const SQLite = await loadBetterSqlite();
  const db = new SQLite(source, { fileMustExist: true, timeout: 5000, readonly });
  try {
    await db.backup(target, { progress: () => ONE_STEP });
  } finally {
    db.close();
  }
}

/**
 * Copies the database `source` into `target` through a 0600 file beside the target, renamed at the
 * end: a reader never sees half a copy, and the copy of key hashes and sealed credentials is the
 * owner's only.
 */
async function copyDatabase(source: string, target: string, readonly: boolean): Promise<void> {
  const temporary = `${target}.tmp-${process.pid}`;
  closeSync(openSync(temporary, 'w', 0o600));
  try {
    await onlineBackup(sqliteDriverName(), source, temporary, readonly);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** `FILE [--force]`; anything else is the usage line and exit 2. */
function fileArgument(args: string[], usage: string): { file: string; force: boolean } {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { force: { type: 'boolean', default: false } },
    });
    const [file, ...extra] = positionals;
    if (file && extra.length === 0) return { file, force: values.force };
  } catch {
    // An unknown option: the usage below.
  }
  throw new CommandError(usage, 2);
}

function fail(error: unknown, print: Print): number {
  if (error instanceof CommandError) {
    print(error.message);
    return error.exitCode;
  }
  throw error;
}

/** `platform backup FILE [--force]`: a consistent copy of the SQLite database, the server running or not. */
export async function backupCommand(args: string[], options: BackupCommandOptions = {}): Promise<number> {
  const print = options.print ?? stdout;
  try {
    const { file, force } = fileArgument(args, 'usage: platform backup FILE [--force]');
    const config = options.config ?? loadConfig();
    if (config.DATABASE_URL.startsWith('postgres')) return postgresAdvice(config, file, print);
    const source = databaseFile(config);
    if (!existsSync(source)) throw new CommandError(`No database at ${source} (check DATA_DIR)`);
    const target = path.resolve(file);
    if (path.resolve(source) === target) throw new CommandError('The backup file is the database itself');
    if (existsSync(target) && !force) throw new CommandError(`${file} exists; pass --force to replace it`, 2);
    if (!existsSync(path.dirname(target))) throw new CommandError(`${path.dirname(file)}: no such folder`);
    await copyDatabase(source, target, false);
    const migrations = await checkPlatformDatabase(target);
    const megabytes = (statSync(target).size / 1_048_576).toFixed(1);
    print(`Backed up ${source} to ${file} (${megabytes} MB, ${migrations} migrations)`);
    encryptionKeyReminder(config, print);
    return 0;
  } catch (error) {
    return fail(error, print);
  }
}

/**
 * Whether a process has the database open. The server keeps it in WAL mode; leaving WAL needs the
 * only connection, so a refusal means another one (a server, a worker, a CLI command) holds it.
 * The check leaves it in rollback mode: the next open turns WAL on again.
 */
async function assertNotInUse(file: string): Promise<void> {
  const db = await openRawSqlite(file);
  try {
    db.exec('pragma busy_timeout = 0');
    db.exec('pragma journal_mode = DELETE');
    if (db.scalar('pragma journal_mode') !== 'delete') throw new Error('database is locked');
  } catch (error) {
    const { code, errcode, message } = error as { code?: string; errcode?: number; message?: string };
    if (code?.startsWith('SQLITE_BUSY') || errcode === 5 || message?.includes('database is locked'))
      throw new CommandError(`${file} is in use (is the server running?): stop it before restoring`, 2);
    throw error;
  } finally {
    db.close();
  }
}

/**
 * `platform restore FILE [--force]`: replaces the SQLite database with a backup, then runs the
 * migrations the backup predates. Refuses a file that is not the platform's database, an existing
 * database without --force, and a database some process still has open.
 */
export async function restoreCommand(args: string[], options: BackupCommandOptions = {}): Promise<number> {
  const print = options.print ?? stdout;
  try {
    const { file, force } = fileArgument(args, 'usage: platform restore FILE [--force]');
    const config = options.config ?? loadConfig();
    if (config.DATABASE_URL.startsWith('postgres')) return postgresAdvice(config, file, print);
    const target = databaseFile(config);
    await checkPlatformDatabase(file);
    if (path.resolve(file) === path.resolve(target))
      throw new CommandError('The backup file is the database itself');
    if (existsSync(target) && statSync(target).size > 0) {
      if (!force) throw new CommandError(`${target} exists; pass --force to replace it with ${file}`, 2);
      await assertNotInUse(target);
    }
    mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
    // The old database's companions must not be replayed onto the restored one.
    for (const companion of ['-wal', '-shm', '-journal']) rmSync(`${target}${companion}`, { force: true });
    // Read-only: a backup on read-only media restores as well.
    await copyDatabase(file, target, true);
    // Here only: a backup needs neither Kysely nor the migrations (a few hundred files to load).
    const [{ openDatabase }, { migrateToLatest }, { platformMigrations }] = await Promise.all([
      import('../core/db/database.js'),
      import('../core/db/migrate.js'),
      import('./migrations.js'),
    ]);
    const database = await openDatabase({ databaseUrl: '', dataDir: config.DATA_DIR });
    try {
      const results = await migrateToLatest(database.db, platformMigrations);
      print(`Restored ${file} into ${target}; ${results.length} migration(s) applied`);
    } finally {
      await database.close();
    }
    encryptionKeyReminder(config, print);
    return 0;
  } catch (error) {
    return fail(error, print);
  }
}
