import type { Transaction } from 'kysely';
import type { Db } from '../../../core/db/database.js';
import { lockRow } from '../../../core/db/row-lock.js';
import type { Database } from '../../../core/db/types.js';
import type { CredentialsTable } from '../tables.js';

export type CredentialRow = CredentialsTable;

/** Tries of a compare-and-swap write of a credential's data before giving up (a bound, not a wait). */
export const CREDENTIAL_WRITE_ATTEMPTS = 5;

export class CredentialStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db
      .selectFrom('credentials')
      .select(['id', 'account_id', 'name', 'type', 'owner', 'created_at', 'updated_at'])
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
    return new Set((await this.owners(accountId, refs)).flatMap((r) => [r.id, r.name]));
  }

  /** The credentials `refs` name (by id or name), with their owners and the principals they are shared with. */
  async owners(
    accountId: string,
    refs: string[],
  ): Promise<Array<{ id: string; name: string; owner: string; sharedWith: Set<string> }>> {
    if (refs.length === 0) return [];
    const rows = await this.db
      .selectFrom('credentials')
      .select(['id', 'name', 'owner'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('id', 'in', refs), eb('name', 'in', refs)]))
      .execute();
    const shares = await this.sharesOf(rows.map((r) => r.id));
    return rows.map((r) => ({ ...r, sharedWith: shares.get(r.id) ?? new Set() }));
  }

  /** Principals each credential is shared with. */
  async sharesOf(ids: string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    if (ids.length === 0) return out;
    const rows = await this.db
      .selectFrom('credential_shares')
      .select(['credential_id', 'principal'])
      .where('credential_id', 'in', ids)
      .execute();
    for (const r of rows) {
      const set = out.get(r.credential_id) ?? new Set<string>();
      set.add(r.principal);
      out.set(r.credential_id, set);
    }
    return out;
  }

  /**
   * n8n's share: the given principals replace the credential's shares (its owner stays, and is left
   * out as of the locked row: a transfer made meanwhile is seen). Shares and transfers of one
   * credential run one after another on its locked row, so the list is one caller's, whole.
   */
  async replaceShares(accountId: string, id: string, principals: string[], at: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const owner = await lockCredential(trx, accountId, id);
      const shared = principals.filter((p) => p !== owner);
      await trx.deleteFrom('credential_shares').where('credential_id', '=', id).execute();
      if (shared.length > 0)
        await trx
          .insertInto('credential_shares')
          .values(
            shared.map((principal) => ({
              credential_id: id,
              principal,
              account_id: accountId,
              created_at: at,
            })),
          )
          .execute();
    });
  }

  /** n8n's transfer: a new owner; a share with that owner is now redundant. */
  async transfer(accountId: string, id: string, owner: string, at: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockCredential(trx, accountId, id);
      await trx
        .updateTable('credentials')
        .set({ owner, updated_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute();
      await trx
        .deleteFrom('credential_shares')
        .where('credential_id', '=', id)
        .where('principal', '=', owner)
        .execute();
    });
  }

  /** Whose rights a workflow of the account runs with (null: no such workflow). */
  async savedBy(accountId: string, workflowId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('workflows')
      .select('saved_by')
      .where('account_id', '=', accountId)
      .where('id', '=', workflowId)
      .executeTakeFirst();
    return row?.saved_by ?? null;
  }

  /**
   * Changes the row; with `ifData`, only while its sealed data is still that (compare-and-swap: every
   * sealing has a fresh IV, so equal text means no one wrote the data since it was read).
   */
  async update(
    accountId: string,
    id: string,
    changes: Partial<Pick<CredentialRow, 'name' | 'data' | 'updated_at'>>,
    ifData?: string,
  ): Promise<boolean> {
    let query = this.db
      .updateTable('credentials')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('id', '=', id);
    if (ifData !== undefined) query = query.where('data', '=', ifData);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('credential_shares').where('credential_id', '=', id).execute();
      // A renewal lease left by a process that died (a row per credential at most).
      await trx.deleteFrom('credential_oauth_renewals').where('credential_id', '=', id).execute();
      return trx
        .deleteFrom('credentials')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
    });
    return Number(result.numDeletedRows) > 0;
  }
}

/** Locks a credential's row for the rest of `trx` (a no-op update) and reads its owner. */
async function lockCredential(
  trx: Transaction<Database>,
  accountId: string,
  id: string,
): Promise<string | null> {
  await lockRow(trx, 'credentials', id);
  const row = await trx
    .selectFrom('credentials')
    .select('owner')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.owner ?? null;
}
