import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { AccountsTable, ApiKeysTable } from './tables.js';
import './tables.js';

export type KeyRow = Selectable<ApiKeysTable>;
type AccountRow = Selectable<AccountsTable>;

/** Queries on the auth module's own tables. */
export class AuthStore {
  constructor(private readonly db: Db) {}

  countAccounts(): Promise<number> {
    return this.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  }

  async insertAccount(row: Insertable<AccountsTable>): Promise<void> {
    await this.db.insertInto('accounts').values(row).execute();
  }

  firstAccount(): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().orderBy('id').limit(1).executeTakeFirst();
  }

  accountById(id: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insertKey(row: Insertable<ApiKeysTable>): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  keyById(id: string): Promise<KeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  keyOfAccount(accountId: string, id: string): Promise<KeyRow | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** The key whose current hash, or previous hash still in its grace period, matches. */
  keyByHash(hash: string, nowIso: string): Promise<KeyRow | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('hash', '=', hash),
          eb.and([eb('previous_hash', '=', hash), eb('previous_expires_at', '>', nowIso)]),
        ]),
      )
      .executeTakeFirst();
  }

  keysQuery(accountId: string) {
    return this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId);
  }

  allKeys(): Promise<KeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().orderBy('id').execute();
  }

  /**
   * Writes `patch`; with `unless`, only while the key is not revoked (and, given `hash`, still has
   * that value): a compare-and-set, so a rotation or a change racing a revocation or another
   * rotation cannot write back what it read. False when the condition no longer held.
   */
  async updateKey(
    id: string,
    patch: Updateable<ApiKeysTable>,
    unless?: { revoked: true; hash?: string },
  ): Promise<boolean> {
    let query = this.db.updateTable('api_keys').set(patch).where('id', '=', id);
    if (unless) query = query.where('revoked_at', 'is', null);
    if (unless?.hash !== undefined) query = query.where('hash', '=', unless.hash);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
