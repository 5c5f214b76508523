import type pg from 'pg';
import {
  DatabaseUnavailableError,
  pgConnectionSurvives,
  pgFault,
  pgRejectedBeforeRunning,
} from './faults.js';

interface ResilientPoolOptions {
  /** How long an operation waits for a connection (a free slot, or the server back) before it fails. */
  waitMs: number;
  /** Told of every fault seen, so the handle can report the database down and watch for its return. */
  onFault(reason: string): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A read that may simply be sent again: nothing it does outlives it. */
function isRead(text: string): boolean {
  if (/^\s*select\b/i.test(text)) return !/\b(nextval|setval|pg_advisory)\b/i.test(text);
  return /^\s*with\b/i.test(text) && !/\b(insert|update|delete|merge)\b/i.test(text);
}

const EMPTY: pg.QueryResult = { command: '', rowCount: 0, oid: 0, fields: [], rows: [] };

/**
 * node-postgres's pool as Kysely's PostgresDialect uses it (`connect`, `end`, and a client's `query`
 * and `release`), riding through a server that restarts or drops connections:
 * - acquiring a connection tries again (50 ms, doubling to 500 ms) while the server refuses or is
 *   starting up, for at most `waitMs`; then a DatabaseUnavailableError (a 503);
 * - a statement outside a transaction that failed on a lost connection is sent again on a fresh
 *   one when that is safe: a read, or a write the server refused or aborted before it took effect;
 * - inside a transaction nothing is sent again here: the server rolls the transaction back, and the
 *   whole transaction is run again by RetryingKysely (retrying-kysely.ts);
 * - every error it passes on is a DatabaseUnavailableError saying whether the write may have
 *   committed (`committed: 'unknown'` only for a COMMIT or a lone write whose connection died).
 * Every client gets an `error` listener: pg emits `error` on a checked-out client whose server goes
 * away between queries, and an unheard `error` event ends the process.
 */
export class ResilientPool {
  private readonly wrappers = new WeakMap<pg.PoolClient, ResilientClient>();

  constructor(
    readonly pool: pg.Pool,
    private readonly options: ResilientPoolOptions,
  ) {
    pool.on('error', (error) => this.noteFault(error));
    pool.on('connect', (client) => {
      client.on('error', (error) => this.noteFault(error));
    });
  }

  private noteFault(error: unknown): void {
    this.options.onFault(pgFault(error) ?? 'connection lost');
  }

  fault(reason: string): void {
    this.options.onFault(reason);
  }

  get waitMs(): number {
    return this.options.waitMs;
  }

  async connect(): Promise<ResilientClient> {
    const client = await this.acquire(Date.now() + this.options.waitMs);
    let wrapper = this.wrappers.get(client);
    if (!wrapper) {
      wrapper = new ResilientClient(client, this);
      this.wrappers.set(client, wrapper);
    }
    wrapper.reset();
    return wrapper;
  }

  /** A pooled client, waiting for the server (or a free slot) until `deadline`. */
  async acquire(deadline: number): Promise<pg.PoolClient> {
    let delay = 50;
    for (;;) {
      const left = deadline - Date.now();
      const attempt = this.pool.connect();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(1, left));
      });
      try {
        const won = await Promise.race([attempt, timedOut]);
        if (won !== 'timeout') return won;
        // Given up on: whatever the pool hands over later goes straight back.
        attempt.then(
          (late) => late.release(),
          () => undefined,
        );
        this.options.onFault('no free connection');
        throw new DatabaseUnavailableError(
          `No database connection within ${this.options.waitMs} ms`,
          this.busy() ? 'no free connection' : 'unreachable',
          false,
        );
      } catch (error) {
        if (error instanceof DatabaseUnavailableError) throw error;
        const reason = pgFault(error);
        if (!reason) throw error;
        this.options.onFault(reason);
        if (deadline - Date.now() <= 0)
          throw new DatabaseUnavailableError(`The database is unavailable (${reason})`, reason, false, {
            cause: error,
          });
        await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
        delay = Math.min(delay * 2, 500);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  private busy(): boolean {
    return this.pool.waitingCount > 0 && this.pool.totalCount >= (this.pool.options.max ?? 10);
  }

  /** One statement on a connection of its own, sent again while it fails before taking effect. */
  async runAlone(text: string, values: unknown[] | undefined, deadline: number): Promise<pg.QueryResult> {
    for (;;) {
      const client = await this.acquire(deadline);
      try {
        const result = await client.query(text, values);
        client.release();
        return result;
      } catch (error) {
        const reason = pgFault(error);
        client.release(reason !== null && !pgConnectionSurvives(reason));
        if (!reason) throw error;
        this.options.onFault(reason);
        const again = isRead(text) || pgRejectedBeforeRunning(error);
        if (!again || pgConnectionSurvives(reason) || Date.now() >= deadline)
          throw new DatabaseUnavailableError(
            `The database is unavailable (${reason})`,
            reason,
            again ? false : 'unknown',
            { cause: error },
          );
        await sleep(50);
      }
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/** A checked-out client: Kysely sees only `query` and `release`. */
class ResilientClient {
  private inTransaction = false;
  private broken = false;
  private released = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly owner: ResilientPool,
  ) {}

  reset(): void {
    this.inTransaction = false;
    this.broken = false;
    this.released = false;
  }

  // Kysely passes a cursor object (not text) when it streams; that goes through untouched.
  query(text: string | pg.Submittable, values?: unknown[]): Promise<pg.QueryResult> {
    if (typeof text !== 'string') return this.client.query(text as never);
    return this.send(text, values);
  }

  private async send(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const begins = /^\s*(begin|start\s+transaction)\b/i.test(text);
    const ends = /^\s*(commit|rollback|end)\b/i.test(text);
    if (this.broken) {
      // The server rolled back what this connection had open when the connection died.
      if (/^\s*rollback\b/i.test(text)) {
        this.inTransaction = false;
        return EMPTY;
      }
      throw new DatabaseUnavailableError('The database connection was lost', 'connection lost', false);
    }
    const inTransaction = this.inTransaction || begins;
    try {
      const result = await this.client.query(text, values);
      if (begins) this.inTransaction = true;
      if (ends) this.inTransaction = false;
      return result;
    } catch (error) {
      if (ends) this.inTransaction = false;
      const reason = pgFault(error);
      if (!reason) throw error;
      this.owner.fault(reason);
      if (!pgConnectionSurvives(reason)) this.broken = true;
      const alone = !inTransaction && !ends;
      if (
        alone &&
        !pgConnectionSurvives(reason) &&
        (isRead(text) || pgRejectedBeforeRunning(error) || this.neverSent(error))
      ) {
        // The dead connection goes back first: with a pool of one, the retry needs its slot.
        this.release();
        return this.owner.runAlone(text, values, Date.now() + this.owner.waitMs);
      }
      const committed = /^\s*(commit|end)\b/i.test(text) || (alone && !isRead(text)) ? 'unknown' : false;
      throw new DatabaseUnavailableError(`The database is unavailable (${reason})`, reason, committed, {
        cause: error,
      });
    }
  }

  /** pg refuses a query on a client it already knows is dead without sending anything. */
  private neverSent(error: unknown): boolean {
    const message = error instanceof Error ? error.message : '';
    return /not queryable/i.test(message);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    // A dead connection is destroyed, not handed to the next caller.
    this.client.release(this.broken ? true : undefined);
  }
}
