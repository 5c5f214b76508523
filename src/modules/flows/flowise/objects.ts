import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import { lockRow } from '../../../core/db/row-lock.js';
import type { Database } from '../../../core/db/types.js';
import { AppError, notFound } from '../../../core/errors.js';

/** Flowise's small records kept here, by kind; the per-flow ones name their chatflow. */
export type ObjectKind = 'tool' | 'variable' | 'assistant' | 'feedback' | 'lead' | 'upsert' | 'docstore';

/** Records of one kind an account may hold (Flowise lists them whole). */
const MAX_PER_KIND = 10_000;
/** Most records a list answers (newest or oldest first, as asked). */
const MAX_LISTED = 1_000;

export interface StoredObject {
  id: string;
  flowId: string | null;
  body: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface ListFilter {
  flowId?: string;
  order?: 'asc' | 'desc';
  /** ISO timestamps, inclusive. */
  startDate?: string;
  endDate?: string;
}

/**
 * Tools, variables, assistants, feedback, leads and upsert history of Flowise's API: JSON bodies in one
 * table, every query scoped to the account and kind.
 */
export class FlowiseObjects {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** The time records are stamped with (the platform's clock). */
  now(): string {
    return this.clock.now().toISOString();
  }

  async create(
    accountId: string,
    kind: ObjectKind,
    body: Record<string, unknown>,
    flowId: string | null = null,
  ): Promise<StoredObject> {
    const now = this.clock.now().toISOString();
    const row = {
      id: randomUUID(),
      account_id: accountId,
      kind,
      flow_id: flowId,
      body: JSON.stringify(body),
      created_at: now,
      updated_at: now,
    };
    // Counted on the account's locked row: creates racing each see the others, so a burst cannot pass the cap.
    await this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'accounts', accountId);
      const counted = await trx
        .selectFrom('flowise_objects')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('account_id', '=', accountId)
        .where('kind', '=', kind)
        .executeTakeFirst();
      const count = Number(counted?.n ?? 0);
      // Upsert history is a log: the oldest records make room, so upserts never start failing at the cap.
      if (count >= MAX_PER_KIND && kind === 'upsert')
        await this.dropOldest(trx, accountId, kind, count - MAX_PER_KIND + 1);
      else if (count >= MAX_PER_KIND)
        throw new AppError('CONFLICT', `An account holds at most ${MAX_PER_KIND} records of this kind`, {
          limit: MAX_PER_KIND,
        });
      await trx.insertInto('flowise_objects').values(row).execute();
    });
    return { id: row.id, flowId, body, createdAt: now, updatedAt: now };
  }

  private async dropOldest(
    trx: Kysely<Database>,
    accountId: string,
    kind: ObjectKind,
    count: number,
  ): Promise<void> {
    const oldest = trx
      .selectFrom('flowise_objects')
      .select('id')
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .orderBy('created_at')
      .orderBy('id')
      .limit(count);
    await trx
      .deleteFrom('flowise_objects')
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('id', 'in', oldest)
      .execute();
  }

  async get(accountId: string, kind: ObjectKind, id: string, db = this.db): Promise<StoredObject> {
    const row = await db
      .selectFrom('flowise_objects')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('NOT_FOUND', labelOf(kind), id);
    return objectOf(row);
  }

  async list(accountId: string, kind: ObjectKind, filter: ListFilter = {}): Promise<StoredObject[]> {
    let query = this.db
      .selectFrom('flowise_objects')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', kind);
    if (filter.flowId !== undefined) query = query.where('flow_id', '=', filter.flowId);
    if (filter.startDate !== undefined) query = query.where('created_at', '>=', filter.startDate);
    if (filter.endDate !== undefined) query = query.where('created_at', '<=', filter.endDate);
    const order = filter.order ?? 'asc';
    const rows = await query.orderBy('created_at', order).orderBy('id', order).limit(MAX_LISTED).execute();
    return rows.map(objectOf);
  }

  async update(
    accountId: string,
    kind: ObjectKind,
    id: string,
    patch: Record<string, unknown>,
  ): Promise<StoredObject> {
    return (await this.change(accountId, kind, id, () => patch)).after;
  }

  /**
   * Merges `patch(current)` into a record's body on its locked row: `patch` sees the body with every
   * racing change committed, and the body is read, changed and written in one step, so changes
   * racing on one record (a document store's loaders, its name) never lose one another. `patch`
   * throws to refuse (nothing is written); it runs inside the transaction, so it must not touch the
   * database (on SQLite that would wait for this very transaction). Answers the record before and after.
   */
  async change(
    accountId: string,
    kind: ObjectKind,
    id: string,
    patch: (current: StoredObject) => Record<string, unknown>,
  ): Promise<{ before: StoredObject; after: StoredObject }> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'flowise_objects', id);
      const before = await this.get(accountId, kind, id, trx);
      const body = { ...before.body, ...patch(before) };
      const updatedAt = this.clock.now().toISOString();
      await trx
        .updateTable('flowise_objects')
        .set({ body: JSON.stringify(body), updated_at: updatedAt })
        .where('account_id', '=', accountId)
        .where('kind', '=', kind)
        .where('id', '=', id)
        .execute();
      return { before, after: { ...before, body, updatedAt } };
    });
  }

  /**
   * Deletes a record and answers it as it was at that moment (one statement): what hangs off its body
   * (a document store's loaders) is what a racing change left there, not an earlier read.
   */
  async delete(accountId: string, kind: ObjectKind, id: string): Promise<StoredObject> {
    const row = await this.db
      .deleteFrom('flowise_objects')
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('NOT_FOUND', labelOf(kind), id);
    return objectOf(row);
  }

  /** Deletes the listed records of a flow; answers how many went. */
  async deleteMany(accountId: string, kind: ObjectKind, flowId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db
      .deleteFrom('flowise_objects')
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('flow_id', '=', flowId)
      .where('id', 'in', ids)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Records of a deleted flow go with it. */
  async deleteOfFlow(accountId: string, flowId: string): Promise<void> {
    await this.db
      .deleteFrom('flowise_objects')
      .where('account_id', '=', accountId)
      .where('flow_id', '=', flowId)
      .execute();
  }
}

function labelOf(kind: ObjectKind): string {
  return {
    tool: 'Tool',
    variable: 'Variable',
    assistant: 'Assistant',
    feedback: 'Feedback',
    lead: 'Lead',
    upsert: 'Upsert history',
    docstore: 'Document store',
  }[kind];
}

function objectOf(row: {
  id: string;
  flow_id: string | null;
  body: string;
  created_at: string;
  updated_at: string;
}): StoredObject {
  return {
    id: row.id,
    flowId: row.flow_id,
    body: JSON.parse(row.body) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
