/**
 * Which failures of the database (and of the disk under it) are passing conditions: the server is
 * restarting, unreachable, out of connections or out of space. They answer 503 with `Retry-After`
 * (error-handler.ts), never end the process (process-faults.ts), and the work they interrupted is
 * taken up again once the database answers (workflows/maintenance.ts).
 */

/** What the caller is told is missing: the database, or the disk a file was being written to. */
type FaultyDependency = 'database' | 'disk';

interface DependencyFault {
  dependency: FaultyDependency;
  /** Short, for the error's details and the log: `unreachable`, `disk full`, `busy`, … */
  reason: string;
}

/**
 * A database operation that failed because the database could not be used. `committed` says what
 * is known of a write: `false` when the statement (or transaction) certainly did not take effect, so
 * running it again is safe; `'unknown'` when the connection died while a COMMIT or a lone write was
 * on its way.
 */
export class DatabaseUnavailableError extends Error {
  readonly dependency = 'database' as const;
  constructor(
    message: string,
    readonly reason: string,
    readonly committed: false | 'unknown',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** PostgreSQL SQLSTATEs of a server going away, not accepting connections, or out of resources. */
const PG_UNAVAILABLE: Record<string, string> = {
  '57P01': 'restarting', // admin_shutdown: terminated by a fast shutdown or pg_terminate_backend
  '57P02': 'crashed', // crash_shutdown
  '57P03': 'starting up', // cannot_connect_now
  '53300': 'out of connections', // too_many_connections
  '53100': 'disk full', // disk_full
  '53200': 'out of memory', // out_of_memory
  '57014': 'statement timeout', // query_canceled (statement_timeout)
};

/** Socket errors of a database connection (thrown by pg only, so never an outbound call's). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** node-postgres's own words for a connection that is gone or never came. */
const PG_MESSAGES = [
  /^Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /is not queryable/i,
  /^Client was closed and is not queryable/i,
  /Query read timeout/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/** SQLite's primary result codes (node:sqlite reports them as `errcode`, extended in the high bits). */
const SQLITE_CODES: Record<number, string> = { 5: 'busy', 6: 'locked', 10: 'i/o error', 13: 'disk full' };

function field(error: object, name: string): unknown {
  return (error as Record<string, unknown>)[name];
}

/**
 * The fault of a PostgreSQL client error (pg's errors): a SQLSTATE from the list above, a socket
 * error, or one of pg's connection messages. Anything else (a constraint, a syntax error) is not one.
 */
export function pgFault(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = field(error, 'code');
  if (typeof code === 'string') {
    if (PG_UNAVAILABLE[code]) return PG_UNAVAILABLE[code];
    if (code.startsWith('08')) return 'connection lost';
    if (SOCKET_CODES.has(code)) return 'unreachable';
  }
  const message = field(error, 'message');
  if (typeof message === 'string' && PG_MESSAGES.some((m) => m.test(message)))
    return /timeout exceeded/i.test(message) ? 'no free connection' : 'unreachable';
  return null;
}

/**
 * Whether the server reported the failure itself, so the statement it answered did not take effect:
 * it refused the connection, or ended the session while the statement ran (a fast shutdown aborts
 * the statement's transaction; a finished one has had its answer sent already).
 */
export function pgRejectedBeforeRunning(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? field(error, 'code') : undefined;
  return code === '57P01' || code === '57P03' || code === '53300';
}

/** Faults after which the connection itself is still good (the statement failed, not the link). */
export function pgConnectionSurvives(reason: string): boolean {
  return reason === 'statement timeout' || reason === 'disk full' || reason === 'out of memory';
}

/**
 * The dependency fault behind any thrown value, or null: the database layer's own error, a SQLite
 * error of a full disk or a lock held too long, or a write that found no space (ENOSPC).
 */
export function dependencyFault(error: unknown): DependencyFault | null {
  if (error instanceof DatabaseUnavailableError) return { dependency: 'database', reason: error.reason };
  if (typeof error !== 'object' || error === null) return null;
  const code = field(error, 'code');
  if (code === 'ENOSPC') return { dependency: 'disk', reason: 'disk full' };
  if (code === 'EDQUOT') return { dependency: 'disk', reason: 'quota exceeded' };
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    // better-sqlite3: SQLITE_FULL, SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, …
    const primary = code.split('_')[1];
    if (primary === 'FULL') return { dependency: 'database', reason: 'disk full' };
    if (primary === 'BUSY' || primary === 'LOCKED') return { dependency: 'database', reason: 'busy' };
    if (primary === 'IOERR') return { dependency: 'database', reason: 'i/o error' };
    return null;
  }
  if (code === 'ERR_SQLITE_ERROR') {
    const errcode = field(error, 'errcode');
    const reason = typeof errcode === 'number' ? SQLITE_CODES[errcode & 0xff] : undefined;
    return reason ? { dependency: 'database', reason } : null;
  }
  return null;
}

/**
 * Whether a failed write certainly left nothing behind, so doing it again is safe: the database layer
 * says it did not commit, or SQLite refused it (SQLite rolls back the statement it could not write).
 */
function failedCleanly(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return error.committed === false;
  return dependencyFault(error) !== null;
}

/**
 * A write of background work (no caller waits on its bound) done again, 250 ms to 2 s apart, while it
 * fails cleanly on a dependency fault, for up to `maxMs`: a worker's finished run is stored once the
 * database is back instead of being lost with its outcome.
 */
export async function whenStored<T>(write: () => Promise<T>, maxMs = 60_000): Promise<T> {
  const end = Date.now() + maxMs;
  let delay = 250;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!failedCleanly(error) || Date.now() + delay > end) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 2_000);
    }
  }
}
