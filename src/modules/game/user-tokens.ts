import { addSeconds, type Clock } from '../../core/clock.js';
import type { AppError } from '../../core/errors.js';
import type { SecretBox } from '../../core/secrets.js';
import type { ConnectionCache } from './connection-cache.js';
import { GameTokenRejected } from './game-client.js';
import type { ConnectionRow, GameStore, Owner, TokenColumns } from './store.js';
import { type TokenClient, type TokenGrant, TokenRefused } from './token-client.js';

/** Access tokens are renewed this long before they expire. */
const RENEW_BEFORE_SECONDS = 60;

interface UserTokenDeps {
  store: GameStore;
  box: SecretBox;
  /** The owner's connection and decrypted token without a database read (changes drop it). */
  connections: ConnectionCache;
  tokens: TokenClient;
  clock: Clock;
  /** The 401 GAME_AUTH_REQUIRED to throw, with where to (re)connect. */
  authRequired(owner: Owner, message: string): AppError;
}

/** Seals a grant for storage; a grant without a refresh token keeps the previous one. */
export function tokenColumns(
  box: SecretBox,
  grant: TokenGrant,
  now: Date,
  previous?: Pick<ConnectionRow, 'refresh_token' | 'refresh_expires_at' | 'membership_id'>,
): TokenColumns {
  return {
    membership_id: grant.membershipId || previous?.membership_id || '',
    access_token: box.encrypt(grant.accessToken),
    access_expires_at: addSeconds(now, grant.expiresIn).toISOString(),
    refresh_token: grant.refreshToken ? box.encrypt(grant.refreshToken) : (previous?.refresh_token ?? null),
    refresh_expires_at:
      grant.refreshToken && grant.refreshExpiresIn
        ? addSeconds(now, grant.refreshExpiresIn).toISOString()
        : (previous?.refresh_expires_at ?? null),
  };
}

/**
 * The user's access token for user-specific calls: renewed shortly before it expires and once
 * after the upstream refuses it; concurrent callers share one renewal. A refused renewal marks
 * the connection expired and answers 401 GAME_AUTH_REQUIRED.
 */
export class UserTokens {
  private readonly inflight = new Map<string, Promise<ConnectionRow>>();

  constructor(private readonly deps: UserTokenDeps) {}

  /** Runs `call` with the owner's token; without a usable connection: 401, or anonymous if optional. */
  async run<T>(
    owner: Owner,
    call: (accessToken: string | undefined) => Promise<T>,
    options: { required: boolean },
  ): Promise<T> {
    const { connections } = this.deps;
    let conn = await connections.connectionOf(owner);
    if (conn?.status !== 'active') {
      if (!options.required) return call(undefined);
      throw this.deps.authRequired(
        owner,
        conn
          ? 'The game-platform connection has expired; reconnect'
          : 'No game-platform account is connected',
      );
    }
    try {
      if (this.expiresSoon(conn)) conn = await this.renew(owner, conn);
      try {
        return await call(connections.accessToken(owner, conn));
      } catch (error) {
        if (!(error instanceof GameTokenRejected)) throw error;
        conn = await this.renew(owner, conn);
      }
      try {
        return await call(this.deps.box.decrypt(conn.access_token));
      } catch (error) {
        if (!(error instanceof GameTokenRejected)) throw error;
        await this.expire(owner, conn);
        throw this.deps.authRequired(owner, 'The game platform refused the renewed access token');
      }
    } catch (error) {
      const authRequired = (error as { code?: string } | null)?.code === 'GAME_AUTH_REQUIRED';
      if (authRequired && !options.required) return call(undefined);
      throw error;
    }
  }

  private async expire(owner: Owner, conn: ConnectionRow): Promise<void> {
    await this.deps.store.markExpired(conn.id, conn.token_version, this.now());
    this.deps.connections.changed(owner);
  }

  private expiresSoon(conn: ConnectionRow): boolean {
    const renewAt = Date.parse(conn.access_expires_at) - RENEW_BEFORE_SECONDS * 1000;
    return this.deps.clock.now().getTime() >= renewAt;
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** One renewal per connection version in this process; the database arbitrates across processes. */
  private renew(owner: Owner, conn: ConnectionRow): Promise<ConnectionRow> {
    const key = `${conn.id}:${conn.token_version}`;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.renewNow(owner, conn).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async renewNow(owner: Owner, seen: ConnectionRow): Promise<ConnectionRow> {
    const { store, box, tokens } = this.deps;
    const current = await store.connectionOf(owner);
    const renewedElsewhere = await this.renewedSince(owner, seen, current);
    if (renewedElsewhere) return renewedElsewhere;
    const conn = current as ConnectionRow;
    const refreshExpired =
      conn.refresh_expires_at !== null &&
      Date.parse(conn.refresh_expires_at) <= this.deps.clock.now().getTime();
    if (!conn.refresh_token || refreshExpired) {
      await this.expire(owner, conn);
      throw this.deps.authRequired(owner, 'The game-platform connection has expired; reconnect');
    }
    let grant: TokenGrant;
    try {
      grant = await tokens.refresh(box.decrypt(conn.refresh_token));
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      const winner = await this.renewedSince(owner, conn, await store.connectionOf(owner));
      if (winner) return winner;
      await this.expire(owner, conn);
      throw this.deps.authRequired(owner, 'The game platform refused to renew the access token');
    }
    const columns = tokenColumns(box, grant, this.deps.clock.now(), conn);
    if (await store.renewTokens(conn.id, conn.token_version, columns, this.now())) {
      this.deps.connections.changed(owner);
      return { ...conn, ...columns, status: 'active', token_version: conn.token_version + 1 };
    }
    const winner = await this.renewedSince(owner, conn, await store.connectionOf(owner));
    if (winner) return winner;
    throw this.deps.authRequired(owner, 'The game-platform connection has expired; reconnect');
  }

  /**
   * null when `current` is still the connection we saw (renew it); the newer row when another
   * request or process renewed it meanwhile; 401 when it was disconnected or expired.
   */
  private async renewedSince(
    owner: Owner,
    seen: ConnectionRow,
    current: ConnectionRow | undefined,
  ): Promise<ConnectionRow | null> {
    if (current && current.id === seen.id && current.token_version === seen.token_version) {
      if (current.status === 'active') return null;
    }
    // Renewed, reconnected, expired or removed elsewhere: the row this process holds is stale.
    this.deps.connections.forget(owner);
    if (current?.status === 'active') return current;
    throw this.deps.authRequired(owner, 'The game-platform connection has expired; reconnect');
  }
}
