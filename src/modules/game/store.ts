import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type {
  GameConnectionsTable,
  GameManifestsTable,
  GameOauthCompletionsTable,
  GameOauthStatesTable,
} from './tables.js';
import './tables.js';

export type ConnectionRow = Selectable<GameConnectionsTable>;
type StateRow = Selectable<GameOauthStatesTable>;
type CompletionRow = Selectable<GameOauthCompletionsTable>;
type ManifestRow = Selectable<GameManifestsTable>;

/** Who owns a connection: the key's account, and the customer of a customer token ('' if none). */
export interface Owner {
  accountId: string;
  customerId: string;
}

/** The sealed tokens and expiries written on connect and on every renewal. */
export interface TokenColumns {
  membership_id: string;
  access_token: string;
  access_expires_at: string;
  refresh_token: string | null;
  refresh_expires_at: string | null;
}

/** Queries on the game module's own tables. */
export class GameStore {
  constructor(private readonly db: Db) {}

  connectionOf(owner: Owner): Promise<ConnectionRow | undefined> {
    return this.db
      .selectFrom('game_connections')
      .selectAll()
      .where('account_id', '=', owner.accountId)
      .where('customer_id', '=', owner.customerId)
      .executeTakeFirst();
  }

  /** Connects (or reconnects) an owner: one row per owner, a new row id on each connect. */
  async upsertConnection(row: Insertable<GameConnectionsTable>): Promise<void> {
    await this.db
      .insertInto('game_connections')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'customer_id']).doUpdateSet({
          id: row.id,
          membership_id: row.membership_id,
          access_token: row.access_token,
          access_expires_at: row.access_expires_at,
          refresh_token: row.refresh_token ?? null,
          refresh_expires_at: row.refresh_expires_at ?? null,
          status: 'active',
          token_version: row.token_version,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  }

  /** Stores renewed tokens unless another renewal got there first; true when this one won. */
  async renewTokens(id: string, version: number, tokens: TokenColumns, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('game_connections')
      .set({ ...tokens, status: 'active', token_version: version + 1, updated_at: now })
      .where('id', '=', id)
      .where('token_version', '=', version)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markExpired(id: string, version: number, now: string): Promise<void> {
    await this.db
      .updateTable('game_connections')
      .set({ status: 'expired', updated_at: now })
      .where('id', '=', id)
      .where('token_version', '=', version)
      .execute();
  }

  async deleteConnection(owner: Owner): Promise<boolean> {
    const result = await this.db
      .deleteFrom('game_connections')
      .where('account_id', '=', owner.accountId)
      .where('customer_id', '=', owner.customerId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async insertState(row: Insertable<GameOauthStatesTable>): Promise<void> {
    await this.db.insertInto('game_oauth_states').values(row).execute();
  }

  /**
   * Claims a flow's one-time browser ticket and binds the flow to that browser, in one
   * statement: of two concurrent uses of the link, one gets the row.
   */
  claimTicket(ticketHash: string, browserHash: string, now: string): Promise<StateRow | undefined> {
    return this.db
      .updateTable('game_oauth_states')
      .set({ ticket_hash: null, browser_hash: browserHash })
      .where('ticket_hash', '=', ticketHash)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** Deletes and returns a state in one statement: of two concurrent uses, one gets the row. */
  consumeState(id: string): Promise<StateRow | undefined> {
    return this.db.deleteFrom('game_oauth_states').where('id', '=', id).returningAll().executeTakeFirst();
  }

  async purgeStates(before: string): Promise<void> {
    await this.db.deleteFrom('game_oauth_states').where('expires_at', '<', before).execute();
    await this.db.deleteFrom('game_oauth_completions').where('expires_at', '<', before).execute();
  }

  async insertCompletion(row: Insertable<GameOauthCompletionsTable>): Promise<void> {
    await this.db.insertInto('game_oauth_completions').values(row).execute();
  }

  /** Deletes and returns the account's completion in one statement: it can be used once. */
  consumeCompletion(id: string, accountId: string): Promise<CompletionRow | undefined> {
    return this.db
      .deleteFrom('game_oauth_completions')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst();
  }

  latestManifest(game: string): Promise<ManifestRow | undefined> {
    return this.db
      .selectFrom('game_manifests')
      .selectAll()
      .where('game', '=', game)
      .orderBy('fetched_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async touchManifest(game: string, version: string, now: string): Promise<void> {
    await this.db
      .updateTable('game_manifests')
      .set({ checked_at: now })
      .where('game', '=', game)
      .where('version', '=', version)
      .execute();
  }

  /** Stores a new version and drops the others, in one transaction. */
  async replaceManifest(row: Insertable<GameManifestsTable>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('game_manifests').where('game', '=', row.game).execute();
      await trx
        .insertInto('game_manifests')
        .values(row)
        .onConflict((oc) => oc.columns(['game', 'version']).doNothing())
        .execute();
    });
  }
}
