import type { Db } from '../../../../core/db/database.js';
import { lockRow } from '../../../../core/db/row-lock.js';
import type { CredentialOauthStatesTable } from '../../tables.js';

export type ConsentRow = CredentialOauthStatesTable;

/** The pending consents; each use is one statement, so of two concurrent uses one gets the row. */
export class ConsentStore {
  constructor(private readonly db: Db) {}

  /**
   * Inserts a consent unless its account holds `max` pending at `now` (false then). Counted on the
   * account's locked row: consents asked for at once each see the others, so a burst cannot pass the bound.
   */
  insertUnder(row: ConsentRow, max: number, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'accounts', row.account_id);
      const pending = await trx
        .selectFrom('credential_oauth_states')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', row.account_id)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(pending?.n ?? 0) >= max) return false;
      await trx.insertInto('credential_oauth_states').values(row).execute();
      return true;
    });
  }

  /** Claims the one-time browser ticket: binds the flow to that browser and to the state it is given. */
  claim(ticketHash: string, browserHash: string, stateHash: string, now: string) {
    return this.db
      .updateTable('credential_oauth_states')
      .set({ ticket_hash: null, browser_hash: browserHash, state_hash: stateHash })
      .where('ticket_hash', '=', ticketHash)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** The unclaimed flow of a browser ticket, without claiming it (a look is not a use). */
  byTicket(ticketHash: string, now: string) {
    return this.db
      .selectFrom('credential_oauth_states')
      .selectAll()
      .where('ticket_hash', '=', ticketHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /**
   * Deletes and returns the flow whose state secret hashes to `stateHash`: a state is used once,
   * whatever the outcome, but a wrong secret matches nothing and leaves the flow to its browser.
   */
  consume(id: string, stateHash: string) {
    return this.db
      .deleteFrom('credential_oauth_states')
      .where('id', '=', id)
      .where('state_hash', '=', stateHash)
      .returningAll()
      .executeTakeFirst();
  }

  async purge(before: string): Promise<void> {
    await this.db.deleteFrom('credential_oauth_states').where('expires_at', '<', before).execute();
  }
}
