import { type Kysely, PostgresAdapter, sql } from 'kysely';
import type { Database } from '../../../core/db/types.js';
import type { LlmFilesTable } from '../tables.js';

/** A file without its bytes: what lists and lookups return. */
export type FileRow = Omit<LlmFilesTable, 'data'>;

/** What an account's files hold. */
export interface FilesUsage {
  bytes: number;
  count: number;
}

/** Whether a new file of `bytes` fits beside `used`; null if it does, else the bound it passes. */
export type QuotaCheck = (used: FilesUsage, bytes: number) => 'bytes' | 'count' | null;

const META = ['id', 'account_id', 'purpose', 'filename', 'bytes', 'created_at'] as const;

/** The SQL of `/v1/files`: every query names the account, so another account's file is never found. */
export class FileStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Writes a file whatever the account holds (a batch's results are never lost to the quota). */
  async insert(row: LlmFilesTable): Promise<void> {
    await this.db.insertInto('llm_files').values(row).execute();
  }

  /**
   * Writes a file if `check` lets it in beside what the account holds; else returns that usage and the
   * bound it would pass. The read and the write are one transaction, under a per-account advisory lock
   * on PostgreSQL, so concurrent uploads (in any process) cannot together pass the quota.
   */
  async insertWithin(
    row: LlmFilesTable,
    check: QuotaCheck,
  ): Promise<{ refused: 'bytes' | 'count'; used: FilesUsage } | null> {
    return this.db.transaction().execute(async (trx) => {
      if (trx.getExecutor().adapter instanceof PostgresAdapter)
        await sql`select pg_advisory_xact_lock(hashtext(${`llm_files:${row.account_id}`}))`.execute(trx);
      const used = await usageIn(trx, row.account_id);
      const refused = check(used, row.bytes);
      if (refused) return { refused, used };
      await trx.insertInto('llm_files').values(row).execute();
      return null;
    });
  }

  async usage(accountId: string): Promise<FilesUsage> {
    return usageIn(this.db, accountId);
  }

  async get(accountId: string, id: string): Promise<FileRow | undefined> {
    return this.db
      .selectFrom('llm_files')
      .select(META)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async content(accountId: string, id: string): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('llm_files')
      .select('data')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? Buffer.from(row.data) : undefined;
  }

  /** A page of the account's files by id (ids sort by creation), one more than `limit` to tell `has_more`. */
  async list(
    accountId: string,
    options: { limit: number; after?: string; order: 'asc' | 'desc'; purpose?: string },
  ): Promise<FileRow[]> {
    let q = this.db.selectFrom('llm_files').select(META).where('account_id', '=', accountId);
    if (options.purpose) q = q.where('purpose', '=', options.purpose);
    if (options.after) q = q.where('id', options.order === 'asc' ? '>' : '<', options.after);
    return q
      .orderBy('id', options.order)
      .limit(options.limit + 1)
      .execute();
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('llm_files')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

async function usageIn(db: Kysely<Database>, accountId: string): Promise<FilesUsage> {
  const row = await db
    .selectFrom('llm_files')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.sum<number | string>('bytes').as('bytes'),
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  // PostgreSQL answers bigint and numeric as strings; an account with no file sums to null.
  return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
}
