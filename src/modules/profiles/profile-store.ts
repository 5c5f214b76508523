import type { Db } from '../../core/db/database.js';
import { isUniqueViolation } from '../../core/db/database.js';
import type { UserProfilesTable } from './tables.js';

export type ProfileRow = UserProfilesTable;

/** Profiles, always scoped to their account. */
export class ProfileStore {
  constructor(private readonly db: Db) {}

  find(accountId: string, userId: string): Promise<ProfileRow | undefined> {
    return this.db
      .selectFrom('user_profiles')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** Inserts the row; false when the user already has a profile (the key decides, not a read). */
  async insertNew(row: ProfileRow): Promise<boolean> {
    try {
      await this.db.insertInto('user_profiles').values(row).execute();
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async update(
    accountId: string,
    userId: string,
    changes: Pick<ProfileRow, 'display_name' | 'email' | 'preferences' | 'updated_at'>,
  ): Promise<void> {
    await this.db
      .updateTable('user_profiles')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('user_id', '=', userId)
      .execute();
  }
}
