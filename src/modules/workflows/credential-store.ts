import type { Db } from '../../core/db/database.js';
import type { CredentialsTable } from './tables.js';

export type CredentialRow = CredentialsTable;

export class CredentialStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db
      .selectFrom('credentials')
      .select(['id', 'account_id', 'name', 'type', 'created_at', 'updated_at'])
      .where('account_id', '=', accountId);
  }

  async insert(row: CredentialRow): Promise<void> {
    await this.db.insertInto('credentials').values(row).execute();
  }

  /** By id, or else by name, within one account. */
  async find(accountId: string, ref: string): Promise<CredentialRow | undefined> {
    return this.db
      .selectFrom('credentials')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
      .orderBy('id')
      .executeTakeFirst();
  }

  async existing(accountId: string, refs: string[]): Promise<Set<string>> {
    if (refs.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('credentials')
      .select(['id', 'name'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('id', 'in', refs), eb('name', 'in', refs)]))
      .execute();
    return new Set(rows.flatMap((r) => [r.id, r.name]));
  }

  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<CredentialRow, 'name' | 'data' | 'updated_at'>>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('credentials')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('credentials')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
