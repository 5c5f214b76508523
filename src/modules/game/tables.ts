import type { Timestamp } from '../../core/db/types.js';

/** One connected game-platform account per principal (account + customer, '' for none). */
export interface GameConnectionsTable {
  id: string;
  account_id: string;
  /** The customer of a customer token; '' for the account itself (portable unique key). */
  customer_id: string;
  membership_id: string;
  /** AES-256-GCM sealed (SecretBox), never the clear token. */
  access_token: string;
  access_expires_at: Timestamp;
  refresh_token: string | null;
  refresh_expires_at: Timestamp | null;
  status: 'active' | 'expired';
  /** Bumped on every renewal, so a process can tell another one renewed first. */
  token_version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * Pending OAuth flows: a row exists until its state is used once or expires. The one-time
 * browser link is claimed once (its hash cleared, the browser nonce's hash written).
 */
export interface GameOauthStatesTable {
  id: string;
  account_id: string;
  customer_id: string;
  /** SHA-256 of the one-time browser link's ticket; null once a browser has used it. */
  ticket_hash: string | null;
  /** SHA-256 of the nonce in the cookie of the browser that used the link; null until then. */
  browser_hash: string | null;
  /** The PKCE code_verifier, sealed (SecretBox); its S256 challenge goes on the authorize URL. */
  code_verifier: string;
  /** SHA-256 (hex) of a secret the integration's user session holds; null for an unbound flow. */
  session_binding: string | null;
  /** Where the browser goes after the callback of a bound flow. */
  return_url: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/**
 * Grants of bound flows, parked between the callback and the integration's completion call with
 * its user session's secret (one use; ten minutes).
 */
export interface GameOauthCompletionsTable {
  id: string;
  account_id: string;
  customer_id: string;
  session_binding: string;
  /** The token columns as JSON; the tokens in it are sealed (SecretBox). */
  tokens: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** The manifest of a game title, by its upstream content version. */
export interface GameManifestsTable {
  game: string;
  version: string;
  /** The upstream `Response`, as JSON text. */
  body: string;
  fetched_at: Timestamp;
  checked_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    game_connections: GameConnectionsTable;
    game_oauth_states: GameOauthStatesTable;
    game_oauth_completions: GameOauthCompletionsTable;
    game_manifests: GameManifestsTable;
  }
}
