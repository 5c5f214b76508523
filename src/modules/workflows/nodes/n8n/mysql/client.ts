import { createHash } from 'node:crypto';
import type { Pool, PoolConnection } from 'mysql2';
import { NodeOperationError } from '../../../engine/node-type.js';
import { type AddressOf, guardedAddress } from '../sql/address.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, isOn, type QueryBounds, timedOut, tooManyRows } from '../sql/bounds.js';

/** n8n's `mySql` credential, as stored (text values). */
export type MySqlCredential = Record<string, string | undefined>;

const MAX_POOLS = 50;
const MAX_CONNECTIONS = 10;
const pools = new Map<string, Pool>();

/** mysql2 loads when the first MySQL node runs, not with the platform. */
async function mysqlModule() {
  return (await import('mysql2')).default;
}

/** A pool for the credential at the address the outbound guard answered, kept per credential. */
export async function mysqlPool(
  c: MySqlCredential,
  addressOf: AddressOf | undefined,
  options: { connectTimeoutMs?: number; connectionLimit?: number } = {},
): Promise<Pool> {
  const { address, port } = await guardedAddress(c, addressOf, 3306, 'Database');
  const connectTimeout = Math.min(
    options.connectTimeoutMs ?? (Number(c.connectTimeout) || DEFAULT_CONNECT_TIMEOUT_MS),
    60_000,
  );
  const limit = Math.min(Math.max(1, options.connectionLimit ?? 5), MAX_CONNECTIONS);
  const key = createHash('sha256')
    .update(JSON.stringify([c, address, connectTimeout, limit]))
    .digest('hex');
  const found = pools.get(key);
  if (found) return found;
  const mysql = await mysqlModule();
  const ssl = isOn(c.ssl)
    ? {
        rejectUnauthorized: false,
        ...(c.caCertificate ? { ca: c.caCertificate, rejectUnauthorized: true } : {}),
        ...(c.clientCertificate ? { cert: c.clientCertificate } : {}),
        ...(c.clientPrivateKey ? { key: c.clientPrivateKey } : {}),
      }
    : undefined;
  const pool = mysql.createPool({
    host: address,
    port,
    user: c.user,
    password: c.password ?? '',
    database: c.database,
    connectTimeout,
    connectionLimit: limit,
    maxIdle: limit,
    idleTimeout: 10_000,
    // n8n's Single Query batching sends the statements of all items as one text.
    multipleStatements: true,
    ...(ssl ? { ssl } : {}),
  });
  pool.on('connection', (conn) => conn.on('error', () => undefined));
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, old] = pools.entries().next().value as [string, Pool];
    pools.delete(oldest);
    old.end(() => undefined);
  }
  return pool;
}

export async function withConnection<T>(pool: Pool, work: (conn: PoolConnection) => Promise<T>): Promise<T> {
  const conn = await new Promise<PoolConnection>((resolve, reject) =>
    pool.getConnection((err, c) => (err ? reject(connectionError(err)) : resolve(c))),
  );
  let broken = false;
  try {
    return await work(conn);
  } catch (err) {
    broken = (err as { broken?: boolean }).broken === true;
    throw err;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}

export function connectionError(err: unknown): Error {
  const message = (err as Error).message ?? String(err);
  if (message.includes('ECONNREFUSED'))
    return new NodeOperationError('Connection refused', { description: message });
  if (message.includes('ETIMEDOUT') || message.includes('timeout'))
    return new NodeOperationError('Connection timed out', { description: message });
  return new NodeOperationError(message);
}

type Row = Record<string, unknown>;

/**
 * One statement, bounded as the Postgres node's: with values it is a prepared statement (values sent
 * apart from the SQL); past the timeout the server's query is killed (KILL QUERY from another
 * connection) and this connection dropped; more than `maxRows` rows ends the connection at once.
 * Statements that answer no rows (INSERT, UPDATE…) add none; their result headers (affectedRows,
 * insertId…) go to `headers` when given.
 */
export function runStatement(
  pool: Pool,
  conn: PoolConnection,
  text: string,
  values: unknown[],
  bounds: QueryBounds,
  seen: { rows: number },
  headers?: Row[],
): Promise<Row[]> {
  const rows: Row[] = [];
  return new Promise((resolve, reject) => {
    let failed: Error | null = null;
    const cut = (error: Error) => {
      if (failed) return;
      failed = Object.assign(error, { broken: true });
      clearTimeout(timer);
      const thread = conn.threadId;
      if (thread !== null) pool.query(`KILL QUERY ${Number(thread)}`, () => undefined);
      conn.destroy();
      reject(failed);
    };
    const timer = setTimeout(() => cut(timedOut(bounds.timeoutMs)), bounds.timeoutMs);
    const query =
      values.length > 0
        ? conn.execute({ sql: text, values: values.map(mysqlValue) as never[] })
        : conn.query({ sql: text });
    query.on('result', (row: unknown) => {
      if (failed) return;
      if (isHeader(row)) {
        headers?.push(JSON.parse(JSON.stringify(row)) as Row);
        return;
      }
      if (++seen.rows > bounds.maxRows) return cut(tooManyRows(bounds.maxRows));
      rows.push(row as Row);
    });
    query.on('error', (err: Error & { sqlMessage?: string; code?: string }) => {
      clearTimeout(timer);
      if (failed) return;
      failed = err;
      reject(new NodeOperationError(err.message, { description: `sql: ${text}, code: ${err.code ?? ''}` }));
    });
    query.on('end', () => {
      clearTimeout(timer);
      if (!failed) resolve(rows.map((r) => JSON.parse(JSON.stringify(r)) as Row));
    });
  });
}

const isHeader = (row: unknown) =>
  typeof row === 'object' && row !== null && (row as object).constructor?.name === 'ResultSetHeader';

/** MySQL has no arrays: lists and objects go as JSON text; booleans as 1/0. */
function mysqlValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) return JSON.stringify(value);
  return value;
}
