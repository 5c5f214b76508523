import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { MemberRole, SessionsTable } from './tables.js';
import './tables.js';

export type SessionRow = Selectable<SessionsTable>;

/** A session with what its member is now: role and account are read on every request, never cached. */
export interface LiveSession extends SessionRow {
  email: string;
  name: string;
  role: MemberRole;
  member_created_at: string;
}

/** Queries on sessions. */
export class SessionStore {
  constructor(private readonly db: Db) {}

  async insert(row: Insertable<SessionsTable>): Promise<void> {
    await this.db.insertInto('sessions').values(row).execute();
  }

  /** The session of a token hash joined with its member (no row once the member is removed). */
  byTokenHash(tokenHash: string): Promise<LiveSession | undefined> {
    return this.db
      .selectFrom('sessions')
      .innerJoin('members', 'members.id', 'sessions.member_id')
      .selectAll('sessions')
      .select([
        'members.email as email',
        'members.name as name',
        'members.role as role',
        'members.created_at as member_created_at',
      ])
      .where('sessions.token_hash', '=', tokenHash)
      .whereRef('members.account_id', '=', 'sessions.account_id')
      .executeTakeFirst();
  }

  ofMember(memberId: string, nowIso: string): Promise<SessionRow[]> {
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('member_id', '=', memberId)
      .where('expires_at', '>', nowIso)
      .orderBy('id', 'desc')
      .execute();
  }

  async touch(id: string, nowIso: string): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: nowIso }).where('id', '=', id).execute();
  }

  /** Deletes one of the member's sessions; false when they hold no such session. */
  async deleteOfMember(memberId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('sessions')
      .where('id', '=', id)
      .where('member_id', '=', memberId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteById(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  /** Ends every session of a member (removal, password change), but `keep` if given. */
  async deleteAllOfMember(memberId: string, keep?: string): Promise<void> {
    let query = this.db.deleteFrom('sessions').where('member_id', '=', memberId);
    if (keep) query = query.where('id', '!=', keep);
    await query.execute();
  }

  /** Removes sessions past their end; run now and then, not per request. */
  async deleteExpired(nowIso: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', nowIso).execute();
  }
}
