import { CompiledQuery, type Kysely, PostgresAdapter, sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { takeTimeRange } from '../../core/http/time-range.js';
import { newIdAt } from '../../core/ids.js';
import type { RequestLogsTable } from './tables.js';

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

export const REQUEST_LOG_LIST_SPEC: ListSpec = {
  columns: {
    requestId: 'request_id',
    keyId: 'key_id',
    memberId: 'member_id',
    status: 'status',
    method: 'method',
    service: 'service',
  },
  sortable: ['id'],
  filters: {
    requestId: 'string',
    keyId: 'string',
    memberId: 'string',
    status: 'integer',
    statusClass: STATUS_CLASSES,
    method: 'string',
    service: 'string',
    from: 'string',
    to: 'string',
  },
  projectable: [
    'id',
    'requestId',
    'method',
    'path',
    'route',
    'service',
    'status',
    'latencyMs',
    'keyId',
    'memberId',
    'principalKind',
    'clientIp',
    'userAgent',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 50,
  maxLimit: 500,
};

const view = (row: RequestLogsTable) => ({
  id: row.id,
  requestId: row.request_id,
  method: row.method,
  path: row.path,
  route: row.route,
  service: row.service,
  status: row.status,
  latencyMs: row.latency_ms,
  keyId: row.key_id,
  memberId: row.member_id,
  principalKind: row.principal_kind,
  clientIp: row.client_ip,
  userAgent: row.user_agent,
  createdAt: row.created_at,
});

/** What the response hook knows of one finished request. */
export interface RequestRecord {
  accountId: string;
  requestId: string;
  method: string;
  path: string;
  route: string | null;
  service: string | null;
  status: number;
  latencyMs: number;
  keyId: string | null;
  memberId: string | null;
  principalKind: string;
  clientIp: string;
  userAgent: string | null;
}

const COLUMNS = [
  'id',
  'account_id',
  'request_id',
  'method',
  'path',
  'route',
  'service',
  'status',
  'latency_ms',
  'key_id',
  'member_id',
  'principal_kind',
  'client_ip',
  'user_agent',
  'created_at',
] as const satisfies ReadonlyArray<keyof RequestLogsTable>;

/** Rows per INSERT: under both databases' bound-parameter limits (15 columns). */
const INSERT_BATCH = 250;
/** While the database is down, at most this many rows wait in memory; older ones are dropped. */
const MAX_PENDING_ROWS = 50_000;
const PRUNE_EVERY_MS = 3_600_000;

const insertTexts = new Map<string, string>();
/** The multi-row INSERT of `count` rows, its text built once per size and dialect. */
function insertText(count: number, postgres: boolean): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${count}`;
  let text = insertTexts.get(key);
  if (!text) {
    let n = 0;
    const rows: string[] = [];
    for (let r = 0; r < count; r++)
      rows.push(`(${COLUMNS.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`);
    text = `insert into "request_logs" (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${rows.join(', ')}`;
    if (insertTexts.size < 16) insertTexts.set(key, text);
  }
  return text;
}

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

function rowOf(r: RequestRecord, at: number): RequestLogsTable {
  return {
    id: newIdAt('rlog', at),
    account_id: r.accountId,
    request_id: r.requestId,
    method: r.method,
    path: r.path.length > 512 ? r.path.slice(0, 512) : r.path,
    route: r.route,
    service: r.service,
    status: r.status,
    latency_ms: Math.round(r.latencyMs),
    key_id: r.keyId,
    member_id: r.memberId,
    principal_kind: r.principalKind,
    client_ip: r.clientIp,
    user_agent: r.userAgent && r.userAgent.length > 256 ? r.userAgent.slice(0, 256) : r.userAgent,
    created_at: new Date(at).toISOString(),
  };
}

/**
 * The request log: rows are kept in memory and written in multi-row INSERTs off the request path,
 * once a second (a request never waits for the database); rows older than the retention are deleted
 * hourly. Reads flush first, so a list shows the requests made before it.
 */
export class RequestLog {
  /**
   * Requests as the hook recorded them, with their times: made into rows when written (as the
   * gateway's log does: docs/decisions.md, "Gateway CPU on a quiet machine").
   */
  private records: RequestRecord[] = [];
  private recordTimes: number[] = [];
  private rows: RequestLogsTable[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastPruneMs = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Days a row is kept; 0 turns the log off. */
    readonly retentionDays: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Now, by the platform's clock (tests move it). */
  nowMs(): number {
    return this.clock.now().getTime();
  }

  get enabled(): boolean {
    return this.retentionDays > 0;
  }

  start(flushSeconds: number): void {
    this.timer = setInterval(() => void this.flush().catch(this.onError), flushSeconds * 1000);
    this.timer.unref();
  }

  /** The last write at shutdown: a database already gone is logged, never a failed close. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush().catch(this.onError);
  }

  record(r: RequestRecord): void {
    // Bounded between flushes too: the oldest is dropped, as a long database failure does.
    if (this.records.length >= MAX_PENDING_ROWS) {
      this.records.shift();
      this.recordTimes.shift();
    }
    this.records.push(r);
    this.recordTimes.push(this.clock.now().getTime());
  }

  /** Turns the recorded requests into rows (the oldest dropped past the bound). */
  private takeRecords(): void {
    const records = this.records;
    const times = this.recordTimes;
    this.records = [];
    this.recordTimes = [];
    for (let i = 0; i < records.length; i++)
      this.rows.push(rowOf(records[i] as RequestRecord, times[i] as number));
    if (this.rows.length > MAX_PENDING_ROWS) this.rows = this.rows.slice(this.rows.length - MAX_PENDING_ROWS);
  }

  /** Writes what is pending; one flush at a time (a second caller waits for the running one, then goes). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.takeRecords();
    if (this.rows.length === 0 && !this.pruneDue()) return;
    this.flushing = this.write().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private pruneDue(): boolean {
    return this.clock.now().getTime() - this.lastPruneMs >= PRUNE_EVERY_MS;
  }

  private async write(): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    try {
      const postgres = isPostgres(this.db as Kysely<unknown>);
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        const batch = rows.slice(i, i + INSERT_BATCH);
        const parameters: unknown[] = [];
        for (const row of batch) for (const column of COLUMNS) parameters.push(row[column]);
        await this.db.executeQuery(CompiledQuery.raw(insertText(batch.length, postgres), parameters));
      }
    } catch (error) {
      const room = Math.max(0, MAX_PENDING_ROWS - this.rows.length);
      this.rows = rows.slice(Math.max(0, rows.length - room)).concat(this.rows);
      throw error;
    }
    if (this.pruneDue()) await this.prune();
  }

  /** Deletes rows past the retention; returns how many. */
  async prune(): Promise<number> {
    const now = this.clock.now().getTime();
    this.lastPruneMs = now;
    const cutoff = new Date(now - this.retentionDays * 86_400_000).toISOString();
    const result = await this.db
      .deleteFrom('request_logs')
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Per-endpoint and per-status figures of a range (flushes first). */
  async summary(accountId: string, filter: { from: string; to: string; keyId?: string | undefined }) {
    await this.flush();
    return summarize(this.db, accountId, filter);
  }

  /** Newest first; filters requestId, keyId, memberId, status, statusClass, method, service, from, to. */
  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, REQUEST_LOG_LIST_SPEC);
    const range = takeTimeRange(query);
    const { statusClass, ...rest } = query.filters;
    query.filters = rest;
    await this.flush();
    let base = this.db.selectFrom('request_logs').selectAll().where('account_id', '=', accountId);
    if (range.from) base = base.where('created_at', '>=', range.from);
    if (range.to) base = base.where('created_at', '<', range.to);
    if (statusClass !== undefined) {
      const low = Number(String(statusClass)[0]) * 100;
      base = base.where(sql<boolean>`status between ${low} and ${low + 99}`);
    }
    return runList(base, query, REQUEST_LOG_LIST_SPEC, view);
  }
}

/** The value at quantile q (0..1) of a histogram (value → count, ascending values); 0 when empty. */
function quantile(histogram: Array<[number, number]>, total: number, q: number): number {
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [value, n] of histogram) {
    seen += n;
    if (seen >= rank) return value;
  }
  return 0;
}

function percentiles(counts: Map<number, number>) {
  const histogram = [...counts.entries()].sort((a, b) => a[0] - b[0]);
  const total = histogram.reduce((t, [, n]) => t + n, 0);
  return {
    p50: quantile(histogram, total, 0.5),
    p95: quantile(histogram, total, 0.95),
    p99: quantile(histogram, total, 0.99),
  };
}

const add = (counts: Map<number, number>, value: number, n: number) =>
  counts.set(value, (counts.get(value) ?? 0) + n);

/**
 * Requests, errors and latency percentiles per endpoint and per status over a time range. The
 * database groups by endpoint, status and latency (a millisecond histogram), so the rows read are
 * as many as distinct latencies, not requests; percentiles are exact.
 */
export async function summarize(
  db: Db,
  accountId: string,
  filter: { from: string; to: string; keyId?: string | undefined },
) {
  let q = db
    .selectFrom('request_logs')
    .select((eb) => ['method', 'route', 'status', 'latency_ms', eb.fn.countAll<number | string>().as('n')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', filter.from)
    .where('created_at', '<', filter.to);
  if (filter.keyId) q = q.where('key_id', '=', filter.keyId);
  const rows = await q.groupBy(['method', 'route', 'status', 'latency_ms']).execute();
  const endpoints = new Map<
    string,
    { method: string; route: string; latencies: Map<number, number>; requests: number; errors: number }
  >();
  const statuses = new Map<number, number>();
  const all = new Map<number, number>();
  let requests = 0;
  for (const r of rows) {
    const n = Number(r.n);
    const route = r.route ?? '(no route)';
    const id = `${r.method} ${route}`;
    let e = endpoints.get(id);
    if (!e) {
      e = { method: r.method, route, latencies: new Map(), requests: 0, errors: 0 };
      endpoints.set(id, e);
    }
    add(e.latencies, r.latency_ms, n);
    e.requests += n;
    if (r.status >= 400) e.errors += n;
    add(all, r.latency_ms, n);
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + n);
    requests += n;
  }
  return {
    from: filter.from,
    to: filter.to,
    requests,
    latencyMs: percentiles(all),
    byEndpoint: [...endpoints.values()]
      .map((e) => ({
        method: e.method,
        route: e.route,
        requests: e.requests,
        errors: e.errors,
        latencyMs: percentiles(e.latencies),
      }))
      .sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route)),
    byStatus: [...statuses.entries()]
      .map(([status, count]) => ({ status, requests: count }))
      .sort((a, b) => a.status - b.status),
  };
}
