import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';

/** Every status an execution row can hold; all are reported (0 included) so series do not come and go. */
const EXECUTION_STATUSES = ['new', 'running', 'waiting', 'success', 'error', 'canceled'] as const;

/** The numbers a `pg.Pool` keeps about itself. */
export interface PoolLike {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

interface DatabaseCollectorOptions {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The workflows module is loaded (its `executions` table exists). */
  workflows: boolean;
  /** The documents module is loaded (its `documents` table exists). */
  documents: boolean;
}

interface Snapshot {
  executions: Map<string, number>;
  oldestNewAt: string | null;
  documentsPending: number | null;
}

/**
 * Gauges read from the database at scrape time. The queue's state that matters lives in the rows
 * (an execution is `new` until a worker claims it, whichever queue carries it), so one grouped
 * count on an indexed column answers for the in-process queue and BullMQ alike, and for every
 * process sharing the database. One query serves all gauges of a scrape.
 */
export function registerDatabaseCollectors(registry: Registry, options: DatabaseCollectorOptions): void {
  const { db, clock, log } = options;
  let pending: Promise<Snapshot | null> | null = null;

  async function read(): Promise<Snapshot> {
    const executions = new Map<string, number>();
    let oldestNewAt: string | null = null;
    if (options.workflows) {
      const rows = await db
        .selectFrom('executions')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      for (const row of rows) executions.set(row.status, Number(row.n));
      const oldest = await db
        .selectFrom('executions')
        .select((eb) => eb.fn.min('started_at').as('at'))
        .where('status', '=', 'new')
        .executeTakeFirst();
      oldestNewAt = oldest?.at ?? null;
    }
    let documentsPending: number | null = null;
    if (options.documents) {
      const row = await db
        .selectFrom('documents')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('processing', 'is not', null)
        .executeTakeFirst();
      documentsPending = Number(row?.n ?? 0);
    }
    return { executions, oldestNewAt, documentsPending };
  }

  /**
   * A scrape starts every collect function at once (the registry awaits them together): they share
   * the read under way; the next scrape reads afresh.
   */
  function snapshot(): Promise<Snapshot | null> {
    if (!pending) {
      pending = read()
        .catch((err: unknown) => {
          log.warn({ err }, 'metrics: database read failed');
          return null;
        })
        .finally(() => {
          pending = null;
        });
    }
    return pending;
  }

  if (options.workflows) {
    new Gauge({
      name: 'platform_workflow_executions',
      help: 'Workflow executions in the database, by status (counted at scrape time)',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const s = await snapshot();
        if (!s) return;
        for (const status of EXECUTION_STATUSES) this.set({ status }, s.executions.get(status) ?? 0);
      },
    });
    new Gauge({
      name: 'platform_queue_oldest_waiting_seconds',
      help: 'Age of the oldest job not yet taken by a worker (0 when none waits)',
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const s = await snapshot();
        if (!s) return;
        const age = s.oldestNewAt ? (clock.now().getTime() - Date.parse(s.oldestNewAt)) / 1000 : 0;
        this.set({ queue: 'workflow-executions' }, Math.max(0, age));
      },
    });
  }
  if (options.workflows || options.documents) {
    new Gauge({
      name: 'platform_queue_jobs',
      help: 'Jobs of each queue by state: waiting (not yet taken), active (running), pending (either)',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const s = await snapshot();
        if (!s) return;
        if (options.workflows) {
          this.set({ queue: 'workflow-executions', state: 'waiting' }, s.executions.get('new') ?? 0);
          this.set({ queue: 'workflow-executions', state: 'active' }, s.executions.get('running') ?? 0);
        }
        if (s.documentsPending !== null)
          this.set({ queue: 'document-processing', state: 'pending' }, s.documentsPending);
      },
    });
  }
}

/** Connections of this process's PostgreSQL pool: open, idle, and callers waiting for one. */
export function registerPoolCollector(registry: Registry, pool: () => PoolLike | undefined): void {
  new Gauge({
    name: 'platform_db_pool_connections',
    help: "This process's database pool (PostgreSQL): total, idle, and waiting clients",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const p = pool();
      if (!p) return;
      this.set({ state: 'total' }, p.totalCount);
      this.set({ state: 'idle' }, p.idleCount);
      this.set({ state: 'waiting' }, p.waitingCount);
    },
  });
}
