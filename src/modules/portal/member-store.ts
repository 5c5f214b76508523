import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { MemberRole, MembersTable, MemberTokenKind, MemberTokensTable } from './tables.js';
import './tables.js';

export type MemberRow = Selectable<MembersTable>;
export type MemberTokenRow = Selectable<MemberTokensTable>;

/** Queries on members and their one-time tokens. */
export class MemberStore {
  constructor(private readonly db: Db) {}

  async insert(row: Insertable<MembersTable>): Promise<void> {
    await this.db.insertInto('members').values(row).execute();
  }

  byEmail(email: string): Promise<MemberRow | undefined> {
    return this.db.selectFrom('members').selectAll().where('email', '=', email).executeTakeFirst();
  }

  byId(accountId: string, id: string): Promise<MemberRow | undefined> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  ownerOf(accountId: string): Promise<MemberRow | undefined> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('role', '=', 'owner')
      .executeTakeFirst();
  }

  list(accountId: string): Promise<MemberRow[]> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  }

  async setRole(id: string, role: MemberRole, nowIso: string): Promise<void> {
    await this.db.updateTable('members').set({ role, updated_at: nowIso }).where('id', '=', id).execute();
  }

  async setPassword(id: string, hash: string, nowIso: string): Promise<void> {
    await this.db
      .updateTable('members')
      .set({ password_hash: hash, updated_at: nowIso })
      .where('id', '=', id)
      .execute();
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('members').where('id', '=', id).execute();
  }

  async insertToken(row: Insertable<MemberTokensTable>): Promise<void> {
    await this.db.insertInto('member_tokens').values(row).execute();
  }

  tokenByHash(hash: string): Promise<MemberTokenRow | undefined> {
    return this.db.selectFrom('member_tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
  }

  /** Marks a token used, once: false when another request used it first. */
  async useToken(id: string, nowIso: string): Promise<boolean> {
    const result = await this.db
      .updateTable('member_tokens')
      .set({ used_at: nowIso })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Ends the unused tokens of a kind for an email (a new setup link replaces the old one). */
  async retireTokens(email: string, kind: MemberTokenKind, nowIso: string): Promise<void> {
    await this.db
      .updateTable('member_tokens')
      .set({ used_at: nowIso })
      .where('email', '=', email)
      .where('kind', '=', kind)
      .where('used_at', 'is', null)
      .execute();
  }
}
