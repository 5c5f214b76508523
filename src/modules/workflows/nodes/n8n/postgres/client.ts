import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Pool, PoolClient } from 'pg';
import { NodeOperationError } from '../../../engine/node-type.js';
import { type AddressOf, guardedAddress } from '../sql/address.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, isOn, type QueryBounds, timedOut, tooManyRows } from '../sql/bounds.js';

/** n8n's `postgres` credential, as stored (text values). */
export type PostgresCredential = Record<string, string | undefined>;

/** Pools kept (one per credential data and address); the oldest is closed past this. */
const MAX_POOLS = 50;
/** Connections one pool may hold: the credential's maxConnections, at most this. */
const MAX_CONNECTIONS = 10;
const pools = new Map<string, Pool>();
/** The statement_timeout each pooled connection has now, so it is set only when it changes. */
const statementTimeouts = new WeakMap<PoolClient, number>();

/**
 * pg loads when the first Postgres node runs, not with the platform (optional-backends test); the
 * module is kept after, so a run does not go through the module loader's resolution again.
 */
let pgLoaded: Promise<typeof import('pg').default> | undefined;
function pgModule() {
  pgLoaded ??= import('pg').then((m) => m.default);
  return pgLoaded;
}

/**
 * A pool for the credential, connecting to the address the outbound guard answered (never the
 * platform's own connection). Kept per credential data and address, small, closing idle connections.
 */
export async function postgresPool(
  c: PostgresCredential,
  addressOf: AddressOf | undefined,
  connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
): Promise<Pool> {
  const host = c.host ?? '';
  const { address, port } = await guardedAddress(c, addressOf, 5432, 'Database');
  const key = createHash('sha256')
    .update(JSON.stringify([c, address, connectTimeoutMs]))
    .digest('hex');
  const found = pools.get(key);
  if (found) return found;
  const pg = await pgModule();
  const ssl = c.ssl && c.ssl !== 'disable';
  const pool = new pg.Pool({
    host: address,
    port,
    database: c.database,
    user: c.user,
    password: c.password ?? '',
    ssl: ssl ? { rejectUnauthorized: !isOn(c.allowUnauthorizedCerts), servername: host } : false,
    max: Math.min(Math.max(1, Number(c.maxConnections) || 5), MAX_CONNECTIONS),
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: connectTimeoutMs,
    allowExitOnIdle: true,
    application_name: 'n8n-node',
  });
  // An idle connection the server closed: the pool drops it; nothing to fail.
  pool.on('error', () => undefined);
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, old] = pools.entries().next().value as [string, Pool];
    pools.delete(oldest);
    void old.end().catch(() => undefined);
  }
  return pool;
}

/** A connection of the pool for one node run; `done` returns it (or drops it after a failure). */
export async function withConnection<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw connectionError(err);
  }
  const onError = () => undefined;
  client.on('error', onError);
  let broken = false;
  try {
    return await work(client);
  } catch (err) {
    broken = (err as { broken?: boolean }).broken === true;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** n8n's messages for a connection that failed. */
export function connectionError(err: unknown): Error {
  const message = (err as Error).message ?? String(err);
  if (message.includes('ECONNREFUSED'))
    return new NodeOperationError('Connection refused', { description: message });
  if (message.includes('ENOTFOUND'))
    return new NodeOperationError('Host not found', { description: message });
  if (message.includes('timeout') || message.includes('ETIMEDOUT'))
    return new NodeOperationError('Connection timed out', { description: message });
  return new NodeOperationError(message);
}

export interface QueryOptions {
  /** n8n's largeNumbersOutput: 'numbers' reads BIGINT and NUMERIC as numbers (else as text). */
  largeNumbers?: 'numbers' | 'text';
}

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Runs one query with its parameters (sent apart from the SQL), bounded: the server stops it at the
 * timeout (statement_timeout), the client gives up a little later, and more than `maxRows` rows
 * (counted as they arrive, all queries of the run together via `seen`) ends the connection at once.
 */
export async function runQuery(
  client: PoolClient,
  text: string,
  values: unknown[],
  bounds: QueryBounds,
  seen: { rows: number },
  options: QueryOptions = {},
): Promise<Array<Record<string, unknown>>> {
  const pg = await pgModule();
  const seconds = Math.max(1, Math.ceil(bounds.timeoutMs / 1_000)) * 1_000;
  if (statementTimeouts.get(client) !== seconds) {
    await client.query(`SET statement_timeout = ${seconds}`);
    statementTimeouts.set(client, seconds);
  }
  // Always the node's own parsers for BIGINT and NUMERIC: the platform's PostgreSQL connection sets
  // pg's global BIGINT parser to numbers, which would lose n8n's default text (and digits past 2^53).
  const numbers = options.largeNumbers === 'numbers';
  const types = {
    getTypeParser: (oid: number, format?: string) =>
      oid === INT8 || oid === NUMERIC
        ? (v: string) => (numbers ? Number(v) : v)
        : pg.types.getTypeParser(oid, (format ?? 'text') as 'text'),
  };
  const query = new pg.Query({ text, ...(values.length > 0 ? { values } : {}), types });
  const rows: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    let failed: Error | null = null;
    const cut = (error: Error) => {
      if (failed) return;
      failed = Object.assign(error, { broken: true });
      clearTimeout(timer);
      // Ends the conversation: the server stops sending, the pool drops this connection.
      (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
      reject(failed);
    };
    const timer = setTimeout(() => cut(timedOut(bounds.timeoutMs)), seconds + 2_000);
    query.on('row', (row: Record<string, unknown>) => {
      if (failed) return;
      if (++seen.rows > bounds.maxRows) return cut(tooManyRows(bounds.maxRows));
      rows.push(row);
    });
    query.on('error', (err: Error & { code?: string }) => {
      clearTimeout(timer);
      if (failed) return;
      failed = err;
      // 57014: canceled by statement_timeout.
      reject(err.code === '57014' ? timedOut(bounds.timeoutMs) : queryError(err, text));
    });
    query.on('end', () => {
      clearTimeout(timer);
      if (!failed) resolve(rows.map(plain));
    });
    client.query(query);
  });
}

/** Rows as JSON items carry them (dates as ISO text, bytes as n8n's Buffer JSON). */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(row)) as Record<string, unknown>;
}

/** n8n's message: the server's, with its detail or hint, else the failed query. */
function queryError(err: Error & { detail?: string; hint?: string }, text: string): NodeOperationError {
  return new NodeOperationError(err.message, {
    description: err.detail || err.hint || `Failed query: ${text}`,
  });
}
