import type { Kysely } from 'kysely';
import type { Database } from '../../../core/db/types.js';
import type { LlmFilesTable } from '../tables.js';

/** A file without its bytes: what lists and lookups return. */
export type FileRow = Omit<LlmFilesTable, 'data'>;

const META = ['id', 'account_id', 'purpose', 'filename', 'bytes', 'created_at'] as const;

/** The SQL of `/v1/files`: every query names the account, so another account's file is never found. */
export class FileStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: LlmFilesTable): Promise<void> {
    await this.db.insertInto('llm_files').values(row).execute();
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
