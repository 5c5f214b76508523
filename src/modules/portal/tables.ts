import type { Timestamp } from '../../core/db/types.js';

export const MEMBER_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface MembersTable {
  id: string;
  account_id: string;
  /** Lower-cased; unique across accounts (a person signs in by email alone). */
  email: string;
  name: string;
  role: MemberRole;
  /** `scrypt$N$r$p$salt$hash`; null until set through a setup link or the CLI. */
  password_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  member_id: string;
  account_id: string;
  /** SHA-256 (hex) of the cookie value; the value itself is never stored. */
  token_hash: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}

export type MemberTokenKind = 'setup' | 'invite';

/** One-time setup (password) and invite links; only a hash of the token is kept. */
export interface MemberTokensTable {
  id: string;
  hash: string;
  kind: MemberTokenKind;
  account_id: string;
  email: string;
  role: MemberRole;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

declare module '../../core/db/types.js' {
  interface Database {
    members: MembersTable;
    sessions: SessionsTable;
    member_tokens: MemberTokensTable;
  }
}
