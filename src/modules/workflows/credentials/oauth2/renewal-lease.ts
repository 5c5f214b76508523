import type { Db } from '../../../../core/db/database.js';

/**
 * The cross-process guard of one credential's token renewal: a row per credential, taken by one
 * statement (an insert, or the takeover of an ended lease), so of two processes one holds it. Rows
 * are not held in a transaction: a token request may take 15 s, and on SQLite a transaction that
 * long would stop every other write.
 */
export class RenewalLease {
  constructor(private readonly db: Db) {}

  /** Takes the renewal of `credentialId` until `until`; false while another holder's lease lasts. */
  async take(credentialId: string, holder: string, now: string, until: string): Promise<boolean> {
    const row = await this.db
      .insertInto('credential_oauth_renewals')
      .values({ credential_id: credentialId, holder, expires_at: until })
      .onConflict((oc) =>
        oc
          .column('credential_id')
          .doUpdateSet({ holder, expires_at: until })
          .where('credential_oauth_renewals.expires_at', '<=', now),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  }

  /** Gives the renewal back (only the holder's own row: a lease taken over is the new holder's). */
  async release(credentialId: string, holder: string): Promise<void> {
    await this.db
      .deleteFrom('credential_oauth_renewals')
      .where('credential_id', '=', credentialId)
      .where('holder', '=', holder)
      .execute();
  }
}
