import type { ServiceId } from '../../config.js';
import type { Principal } from '../../core/auth/principal.js';
import { type Clock, utcDay } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import { AppError } from '../../core/errors.js';
import type { UsageRecorder } from '../../core/http/auth-hook.js';

interface Pending {
  keyId: string;
  accountId: string;
  day: string;
  service: string;
  requests: number;
  rejected: number;
}

const DAY_MS = 86_400_000;
const MAX_RANGE_DAYS = 366;

/** Language-model tokens of one key, day and model (the llm module reports them). */
interface TokenUsageRow {
  keyId: string;
  day: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Calls whose upstream sent no counts (their tokens are estimates). */
  estimatedRequests: number;
  /** US dollars at the registry's prices; null for a model without a price. */
  costUsd: number | null;
}

type TokenUsageSource = (
  accountId: string,
  filter: { keyId?: string; from: string; to: string },
) => Promise<TokenUsageRow[]>;

/**
 * Per-key, per-day, per-service counts. Requests are counted in memory and added to the
 * table in batches (`requests = requests + n`), so many processes can share one table.
 */
export class UsageLedger implements UsageRecorder {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  /** The UTC day of the last request, by day number: formatting a date per request costs. */
  private day = { number: Number.NaN, text: '' };
  /** Set by the llm module: tokens per model join the report. */
  private tokenSource: TokenUsageSource | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  reportTokensFrom(source: TokenUsageSource): void {
    this.tokenSource = source;
  }

  start(flushSeconds: number): void {
    this.timer = setInterval(() => void this.flush().catch(this.onError), flushSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  record(principal: Principal, service: ServiceId, allowed: boolean): void {
    if (!principal.keyId) return;
    const nowMs = this.clock.now().getTime();
    const dayNumber = Math.floor(nowMs / DAY_MS);
    if (dayNumber !== this.day.number) this.day = { number: dayNumber, text: utcDay(new Date(nowMs)) };
    const day = this.day.text;
    const id = `${principal.keyId}|${day}|${service}`;
    let entry = this.pending.get(id);
    if (!entry) {
      entry = {
        keyId: principal.keyId,
        accountId: principal.accountId,
        day,
        service,
        requests: 0,
        rejected: 0,
      };
      this.pending.set(id, entry);
    }
    if (allowed) entry.requests++;
    else entry.rejected++;
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.db
        .insertInto('usage_daily')
        .values(
          batch.map((p) => ({
            key_id: p.keyId,
            account_id: p.accountId,
            day: p.day,
            service: p.service,
            requests: p.requests,
            rejected: p.rejected,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['key_id', 'day', 'service']).doUpdateSet((eb) => ({
            requests: eb('usage_daily.requests', '+', eb.ref('excluded.requests')),
            rejected: eb('usage_daily.rejected', '+', eb.ref('excluded.rejected')),
          })),
        )
        .execute();
    } catch (error) {
      // Put the counts back so a passing database failure loses nothing.
      for (const p of batch) {
        const id = `${p.keyId}|${p.day}|${p.service}`;
        const current = this.pending.get(id);
        if (current) {
          current.requests += p.requests;
          current.rejected += p.rejected;
        } else this.pending.set(id, p);
      }
      throw error;
    }
  }

  async query(accountId: string, filter: { keyId?: string; from?: string; to?: string }) {
    const today = utcDay(this.clock.now());
    const to = filter.to ?? today;
    const from = filter.from ?? utcDay(new Date(Date.parse(to) - 29 * DAY_MS));
    const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
    if (Number.isNaN(span) || span < 0 || span >= MAX_RANGE_DAYS) {
      throw new AppError(
        'VALIDATION_ERROR',
        `from must not be after to, and the range at most ${MAX_RANGE_DAYS} days`,
        {
          fields: [{ field: 'querystring.from', message: 'out of range' }],
        },
      );
    }
    await this.flush();
    let q = this.db
      .selectFrom('usage_daily')
      .select(['key_id', 'day', 'service', 'requests', 'rejected'])
      .where('account_id', '=', accountId)
      .where('day', '>=', from)
      .where('day', '<=', to);
    if (filter.keyId) q = q.where('key_id', '=', filter.keyId);
    const rows = await q.orderBy('day').orderBy('key_id').orderBy('service').execute();
    const data = rows.map((r) => ({
      keyId: r.key_id,
      day: r.day,
      service: r.service,
      requests: Number(r.requests),
      rejected: Number(r.rejected),
    }));
    const totals = data.reduce(
      (t, r) => ({ requests: t.requests + r.requests, rejected: t.rejected + r.rejected }),
      { requests: 0, rejected: 0 },
    );
    const tokenFilter = filter.keyId ? { keyId: filter.keyId, from, to } : { from, to };
    const tokens = this.tokenSource ? await this.tokenSource(accountId, tokenFilter) : [];
    const tokenTotals = tokens.reduce(
      (t, r) => ({
        promptTokens: t.promptTokens + r.promptTokens,
        completionTokens: t.completionTokens + r.completionTokens,
      }),
      { promptTokens: 0, completionTokens: 0 },
    );
    return { from, to, data, tokens, totals: { ...totals, ...tokenTotals } };
  }
}
