import { CompiledQuery, type Kysely, PostgresAdapter } from 'kysely';
import { type Clock, utcDay } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newIdAt } from '../../core/ids.js';
import type { LlmRequestsTable } from './tables.js';

/** What the gateway knows of one finished call. */
export interface LlmCallRecord {
  accountId: string;
  keyId: string | null;
  endpoint: string;
  model: string;
  answeredBy: string | null;
  provider: string | null;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  tokensEstimated: boolean;
  latencyMs: number;
  ttftMs: number | null;
  status: 'success' | 'error' | 'canceled';
  httpStatus: number;
  errorCode: string | null;
  cached: boolean;
  fallbacksTried: number;
}

export const LLM_REQUEST_STATUSES = ['success', 'error', 'canceled'] as const;

export const LIST_SPEC: ListSpec = {
  columns: { model: 'model', status: 'status', keyId: 'key_id', answeredBy: 'answered_by' },
  sortable: ['id'],
  filters: { model: 'string', status: LLM_REQUEST_STATUSES, keyId: 'string', answeredBy: 'string' },
  projectable: [
    'id',
    'keyId',
    'endpoint',
    'model',
    'answeredBy',
    'provider',
    'stream',
    'promptTokens',
    'completionTokens',
    'tokensEstimated',
    'latencyMs',
    'ttftMs',
    'status',
    'httpStatus',
    'errorCode',
    'cached',
    'fallbacksTried',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 50,
  maxLimit: 500,
};

const view = (row: LlmRequestsTable) => ({
  id: row.id,
  keyId: row.key_id,
  endpoint: row.endpoint,
  model: row.model,
  answeredBy: row.answered_by,
  provider: row.provider,
  stream: row.stream === 1,
  promptTokens: Number(row.prompt_tokens),
  completionTokens: Number(row.completion_tokens),
  tokensEstimated: row.tokens_estimated === 1,
  latencyMs: row.latency_ms,
  ttftMs: row.ttft_ms,
  status: row.status,
  httpStatus: row.http_status,
  errorCode: row.error_code,
  cached: row.cached === 1,
  fallbacksTried: row.fallbacks_tried,
  createdAt: row.created_at,
});

interface DailyTotal {
  key_id: string;
  account_id: string;
  day: string;
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  estimated_requests: number;
}

const FLUSH_AT_ROWS = 500;
/** Rows per INSERT: under both databases' bound-parameter limits (19 columns). */
const INSERT_BATCH = 200;
const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'endpoint',
  'model',
  'answered_by',
  'provider',
  'stream',
  'prompt_tokens',
  'completion_tokens',
  'tokens_estimated',
  'latency_ms',
  'ttft_ms',
  'status',
  'http_status',
  'error_code',
  'cached',
  'fallbacks_tried',
  'created_at',
] as const satisfies ReadonlyArray<keyof LlmRequestsTable>;

/**
 * The multi-row INSERT of `count` log rows, its text built once per size and dialect. The query
 * builder spent ~30 µs a row on this statement (a value node per cell), a sizeable share of a
 * gateway call; the parameters are the same either way.
 */
const insertTexts = new Map<string, string>();
function insertText(count: number, postgres: boolean): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${count}`;
  let text = insertTexts.get(key);
  if (!text) {
    let n = 0;
    const rows: string[] = [];
    for (let r = 0; r < count; r++)
      rows.push(`(${COLUMNS.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`);
    text = `insert into "llm_requests" (${COLUMNS.map((c) => `"${c}"`).join(', ')}) values ${rows.join(', ')}`;
    if (insertTexts.size < 16) insertTexts.set(key, text);
  }
  return text;
}

/**
 * Rows of the next INSERT: a full batch, else the largest power of two left. A timed flush holds any
 * count, and each count is its own statement text, which SQLite (and PostgreSQL) would prepare anew
 * almost every flush; nine sizes stay prepared in the statement cache.
 */
export function batchSize(left: number): number {
  if (left >= INSERT_BATCH) return INSERT_BATCH;
  return 2 ** Math.floor(Math.log2(left));
}

function insertRows(rows: LlmRequestsTable[], postgres: boolean): CompiledQuery {
  const parameters: unknown[] = [];
  for (const row of rows) for (const column of COLUMNS) parameters.push(row[column]);
  return CompiledQuery.raw(insertText(rows.length, postgres), parameters);
}

const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;
/** While the database is down, at most this many log lines wait in memory; older ones are dropped. */
const MAX_PENDING_ROWS = 50_000;

/**
 * Every call, written in batches off the request path (a gateway call must not wait for an insert),
 * with per-key, per-day, per-model token totals added up in the same flush. Reads flush first.
 */
export class LlmRequestLog {
  /**
   * Calls as the gateway recorded them, with their times: made into rows when written. A row built
   * per call (its id, its timestamp text, the day's totals) cost about 15 µs of a gateway call amid
   * the request's own work, against a few µs built in one loop at the flush (docs/decisions.md,
   * "Gateway CPU on a quiet machine").
   */
  private calls: LlmCallRecord[] = [];
  private callTimes: number[] = [];
  private rows: LlmRequestsTable[] = [];
  private totals = new Map<string, DailyTotal>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(flushSeconds: number): void {
    this.timer = setInterval(() => void this.flush().catch(this.onError), flushSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  record(call: LlmCallRecord): void {
    this.calls.push(call);
    this.callTimes.push(this.clock.now().getTime());
    if (this.calls.length >= FLUSH_AT_ROWS) void this.flush().catch(this.onError);
  }

  /** Turns the recorded calls into rows and adds them to the day's totals. */
  private takeCalls(): void {
    const calls = this.calls;
    const times = this.callTimes;
    this.calls = [];
    this.callTimes = [];
    for (let i = 0; i < calls.length; i++) this.addRow(calls[i] as LlmCallRecord, times[i] as number);
  }

  private addRow(call: LlmCallRecord, at: number): void {
    const now = new Date(at);
    this.rows.push({
      id: newIdAt('llmreq', at),
      account_id: call.accountId,
      key_id: call.keyId,
      endpoint: call.endpoint,
      model: call.model,
      answered_by: call.answeredBy,
      provider: call.provider,
      stream: call.stream ? 1 : 0,
      prompt_tokens: call.promptTokens,
      completion_tokens: call.completionTokens,
      tokens_estimated: call.tokensEstimated ? 1 : 0,
      latency_ms: Math.round(call.latencyMs),
      ttft_ms: call.ttftMs === null ? null : Math.round(call.ttftMs),
      status: call.status,
      http_status: call.httpStatus,
      error_code: call.errorCode,
      cached: call.cached ? 1 : 0,
      fallbacks_tried: call.fallbacksTried,
      created_at: now.toISOString(),
    });
    if (call.keyId && call.answeredBy) {
      const day = utcDay(now);
      const id = `${call.keyId}|${day}|${call.answeredBy}`;
      let total = this.totals.get(id);
      if (!total) {
        total = {
          key_id: call.keyId,
          account_id: call.accountId,
          day,
          model: call.answeredBy,
          requests: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          estimated_requests: 0,
        };
        this.totals.set(id, total);
      }
      total.requests++;
      total.prompt_tokens += call.promptTokens;
      total.completion_tokens += call.completionTokens;
      if (call.tokensEstimated) total.estimated_requests++;
    }
  }

  /** Writes what is pending; concurrent callers wait for the same write, then write what came after. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.takeCalls();
    if (this.rows.length === 0 && this.totals.size === 0) return;
    const rows = this.rows;
    const totals = [...this.totals.values()];
    this.rows = [];
    this.totals = new Map();
    this.flushing = this.write(rows, totals).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async write(rows: LlmRequestsTable[], totals: DailyTotal[]): Promise<void> {
    try {
      const postgres = isPostgres(this.db as unknown as Kysely<unknown>);
      await this.db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; ) {
          const size = batchSize(rows.length - i);
          await trx.executeQuery(insertRows(rows.slice(i, i + size), postgres));
          i += size;
        }
        for (let i = 0; i < totals.length; i += 200)
          await trx
            .insertInto('llm_usage_daily')
            .values(totals.slice(i, i + 200))
            .onConflict((oc) =>
              oc.columns(['key_id', 'day', 'model']).doUpdateSet((eb) => ({
                requests: eb('llm_usage_daily.requests', '+', eb.ref('excluded.requests')),
                prompt_tokens: eb('llm_usage_daily.prompt_tokens', '+', eb.ref('excluded.prompt_tokens')),
                completion_tokens: eb(
                  'llm_usage_daily.completion_tokens',
                  '+',
                  eb.ref('excluded.completion_tokens'),
                ),
                estimated_requests: eb(
                  'llm_usage_daily.estimated_requests',
                  '+',
                  eb.ref('excluded.estimated_requests'),
                ),
              })),
            )
            .execute();
      });
    } catch (error) {
      // Put them back so a passing database failure loses nothing (a long one loses the oldest lines;
      // the token totals are kept whole, they are small).
      const room = Math.max(0, MAX_PENDING_ROWS - this.rows.length);
      this.rows = rows.slice(Math.max(0, rows.length - room)).concat(this.rows);
      for (const t of totals) {
        const id = `${t.key_id}|${t.day}|${t.model}`;
        const current = this.totals.get(id);
        if (!current) this.totals.set(id, t);
        else {
          current.requests += t.requests;
          current.prompt_tokens += t.prompt_tokens;
          current.completion_tokens += t.completion_tokens;
          current.estimated_requests += t.estimated_requests;
        }
      }
      throw error;
    }
  }

  /** Newest first; filters model, status, keyId, answeredBy; `cursor` pages. */
  async list(accountId: string, rawQuery: Record<string, unknown>) {
    await this.flush();
    const query = parseListQuery(rawQuery, LIST_SPEC);
    return runList(
      this.db.selectFrom('llm_requests').selectAll().where('account_id', '=', accountId),
      query,
      LIST_SPEC,
      view,
    );
  }

  /** Tokens per key, day and model, for the account's usage report. */
  async tokensByModel(accountId: string, filter: { keyId?: string; from: string; to: string }) {
    await this.flush();
    let q = this.db
      .selectFrom('llm_usage_daily')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('day', '>=', filter.from)
      .where('day', '<=', filter.to);
    if (filter.keyId) q = q.where('key_id', '=', filter.keyId);
    const rows = await q.orderBy('day').orderBy('key_id').orderBy('model').execute();
    return rows.map((r) => ({
      keyId: r.key_id,
      day: r.day,
      model: r.model,
      requests: Number(r.requests),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
      estimatedRequests: Number(r.estimated_requests),
    }));
  }
}
