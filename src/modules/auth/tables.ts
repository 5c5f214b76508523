import type { Generated } from 'kysely';
import type { Timestamp } from '../../core/db/types.js';

export interface AccountsTable {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  type: 'development' | 'production';
  role: 'Reader' | 'Writer' | 'Admin' | 'Custom';
  /** JSON array of service ids, or ["*"]. */
  services: string;
  /** JSON array of `service:operation`. */
  scopes: string;
  /** JSON array of CIDRs; empty = any address. */
  allowed_ips: string;
  daily_quota: number | null;
  /** JSON array of llm model names; empty = any model. */
  models: Generated<string>;
  /** Language-model tokens per UTC day; null = none. */
  daily_token_budget: number | null;
  hash: string;
  previous_hash: string | null;
  previous_expires_at: Timestamp | null;
  last4: string;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface UsageDailyTable {
  key_id: string;
  account_id: string;
  day: string;
  service: string;
  requests: number;
  rejected: number;
}

declare module '../../core/db/types.js' {
  interface Database {
    accounts: AccountsTable;
    api_keys: ApiKeysTable;
    usage_daily: UsageDailyTable;
  }
}
