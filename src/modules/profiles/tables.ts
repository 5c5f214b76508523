import type { JsonText, Timestamp } from '../../core/db/types.js';

export interface UserProfilesTable {
  account_id: string;
  /** The integration's own user id: a customer token's customerId names the same person. */
  user_id: string;
  display_name: string;
  email: string;
  /** JSON `{categories, moods, dislikedNotes, occasions}`, each an array of strings. */
  preferences: JsonText;
  registration_source: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    user_profiles: UserProfilesTable;
  }
}
