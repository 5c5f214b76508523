import { createHash } from 'node:crypto';
import { addSeconds, type Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import {
  type BindingCookieScope,
  bindingCookie,
  bindingNonce,
  clearedBindingCookie,
} from '../../core/oauth/browser-binding.js';
import { type SecretBox, sameSecret } from '../../core/secrets.js';
import type { ConnectionCache } from './connection-cache.js';
import { type OAuthStates, type SessionBinding, STATE_TTL_SECONDS } from './oauth-state.js';
import { type GameSettings, requireSettings } from './settings.js';
import type { GameStore, Owner, TokenColumns } from './store.js';
import { type TokenClient, TokenRefused } from './token-client.js';
import { tokenColumns } from './user-tokens.js';

interface ConnectionView {
  connected: true;
  membershipId: string;
  accessExpiresAt: string;
  refreshExpiresAt: string | null;
}

interface OAuthDeps {
  settings: GameSettings;
  store: GameStore;
  /** Told of every connect and disconnect (drops the owner's cached connection everywhere). */
  connections: Pick<ConnectionCache, 'changed'>;
  states: OAuthStates;
  tokens: TokenClient;
  box: SecretBox;
  clock: Clock;
}

const OAUTH_SETTINGS = ['apiKey', 'clientId', 'clientSecret'] as const;
/** The binding cookies' names: `game_oauth_<state id>`. */
const COOKIE_PREFIX = 'game_oauth_';

/** What the API caller gets to start a connection: a one-time link for the user's browser. */
interface ConnectLink {
  authorizeUrl: string;
  expiresAt: string;
}

/**
 * The authorization-code flow with PKCE, in three steps: the API caller gets a one-time link on
 * the platform; the user's browser opens it, receives the cookie that binds the flow to it and is
 * sent to the upstream authorize URL; the upstream sends that browser back to the callback, which
 * needs the signed state, that browser's cookie and (at the token endpoint) the PKCE verifier.
 */
export class GameOAuth {
  constructor(private readonly deps: OAuthDeps) {}

  /**
   * Step 1 (API key): a new flow for the owner (account + customer); the link is valid once, for
   * 10 minutes. A customer's flow must be bound to the integration's user session (`binding`): a
   * link forwarded to someone else then connects nobody, since only the session that asked for it
   * can complete it.
   */
  async connectLink(owner: Owner, binding?: SessionBinding): Promise<ConnectLink> {
    const { settings, states } = this.deps;
    requireSettings(settings, OAUTH_SETTINGS);
    if (owner.customerId && !binding)
      throw new AppError(
        'VALIDATION_ERROR',
        "A customer's connection must be bound to your user's session: add sessionBinding (SHA-256 hex of a secret kept in that session) and returnUrl",
        { fields: [{ field: 'querystring.sessionBinding', message: 'required with customerId' }] },
      );
    const { ticket, expiresAt } = await states.issue(owner, binding);
    const url = new URL(`${settings.publicUrl}/game/oauth/start`);
    url.searchParams.set('ticket', ticket);
    return { authorizeUrl: url.toString(), expiresAt: expiresAt.toISOString() };
  }

  /** Step 2 (browser): the binding cookie to set and the upstream authorize URL to go to. */
  async browserStart(ticket: string, https: boolean): Promise<{ location: string; cookie: string }> {
    const { settings, states, clock } = this.deps;
    requireSettings(settings, OAUTH_SETTINGS);
    const start = await states.claim(ticket);
    const url = new URL(settings.authorizeUrl);
    url.searchParams.set('client_id', settings.clientId);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('state', start.state);
    url.searchParams.set('code_challenge', start.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    if (settings.redirectUrl) url.searchParams.set('redirect_uri', settings.redirectUrl);
    const maxAge = (start.expiresAt.getTime() - clock.now().getTime()) / 1000;
    return {
      location: url.toString(),
      cookie: bindingCookie(start.stateId, start.nonce, maxAge, this.cookieScope(https)),
    };
  }

  /** The Set-Cookie that removes the flow's cookie once the callback is reached (null if unnamed). */
  clearCookie(state: string, https: boolean): string | null {
    return clearedBindingCookie(state.split('.')[0] ?? '', this.cookieScope(https));
  }

  /**
   * Step 3 (browser): exchanges the code. An unbound flow stores the tokens, sealed, for its
   * principal; a bound one parks them in a completion and sends the browser back to the
   * integration's return URL with its id (`gameConnection`), for step 4.
   */
  async callback(
    code: string,
    state: string,
    cookieHeader: string | undefined,
  ): Promise<ConnectionView | { redirect: string }> {
    const { settings, store, states, tokens, box, clock } = this.deps;
    requireSettings(settings, OAUTH_SETTINGS);
    const stateId = states.verify(state);
    const { owner, codeVerifier, binding } = await states.consume(
      stateId,
      bindingNonce(cookieHeader, stateId, COOKIE_PREFIX),
    );
    let grant: Awaited<ReturnType<TokenClient['exchangeCode']>>;
    try {
      grant = await tokens.exchangeCode(code, codeVerifier);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      throw new AppError('UPSTREAM_ERROR', 'The game platform refused the authorization code', {
        httpStatus: error.httpStatus,
        oauthError: error.oauthError,
      });
    }
    const now = clock.now();
    const columns = tokenColumns(box, grant, now);
    if (binding) {
      const id = newId('gcomp');
      await store.insertCompletion({
        id,
        account_id: owner.accountId,
        customer_id: owner.customerId,
        session_binding: binding.sessionBinding,
        tokens: JSON.stringify(columns),
        expires_at: addSeconds(now, STATE_TTL_SECONDS).toISOString(),
        created_at: now.toISOString(),
      });
      const back = new URL(binding.returnUrl);
      back.searchParams.set('gameConnection', id);
      return { redirect: back.toString() };
    }
    return this.connect(owner, columns, now);
  }

  /**
   * Step 4 (API key), bound flows: the integration, in the request of the browser that came back,
   * presents the secret of its own user session. A match stores the connection; anything else
   * discards the grant (one use), so a link forwarded to another person connects nobody.
   */
  async complete(accountId: string, completionId: string, sessionSecret: string): Promise<ConnectionView> {
    const { store, clock } = this.deps;
    const row = await store.consumeCompletion(completionId, accountId);
    if (!row)
      throw new AppError('NOT_FOUND', 'No such pending game connection (it was used, or never existed)');
    const now = clock.now();
    if (Date.parse(row.expires_at) <= now.getTime())
      throw new AppError('VALIDATION_ERROR', 'This pending game connection has expired; start again', {
        fields: [{ field: 'body.completion', message: 'expired' }],
      });
    const presented = createHash('sha256').update(sessionSecret, 'utf8').digest('hex');
    if (!sameSecret(presented, row.session_binding))
      throw new AppError('FORBIDDEN', 'This session did not start this connection: the grant is discarded', {
        reason: 'session_mismatch',
      });
    const columns = JSON.parse(row.tokens) as TokenColumns;
    return this.connect({ accountId: row.account_id, customerId: row.customer_id }, columns, now);
  }

  private async connect(owner: Owner, columns: TokenColumns, now: Date): Promise<ConnectionView> {
    const { store } = this.deps;
    await store.upsertConnection({
      id: newId('gconn'),
      account_id: owner.accountId,
      customer_id: owner.customerId,
      ...columns,
      status: 'active',
      token_version: 0,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    this.deps.connections.changed(owner);
    return {
      connected: true,
      membershipId: columns.membership_id,
      accessExpiresAt: columns.access_expires_at,
      refreshExpiresAt: columns.refresh_expires_at,
    };
  }

  /** Secure when the platform is public over https or this request came over https. */
  private cookieScope(https: boolean): BindingCookieScope {
    const { publicUrl } = this.deps.settings;
    const base = new URL(publicUrl);
    return {
      path: `${base.pathname.replace(/\/+$/, '')}/game/oauth/callback`,
      secure: https || base.protocol === 'https:',
      prefix: COOKIE_PREFIX,
    };
  }

  async disconnect(owner: Owner): Promise<void> {
    await this.deps.store.deleteConnection(owner);
    this.deps.connections.changed(owner);
  }

  /**
   * 401 GAME_AUTH_REQUIRED naming the route that starts a connection. No ready link: only the
   * integration may start one (for a customer: `customerId`), when its signed-in user is about to
   * open it, and an error answer must not mint a flow and a bearer link as a side effect.
   */
  authRequired(owner: Owner, message: string): AppError {
    const how = owner.customerId
      ? 'the integration must start the connection for this customer (GET /game/oauth/authorize with its API key and customerId) and send the customer’s browser to the link'
      : 'start one with GET /game/oauth/authorize and send the user’s browser to the link';
    return new AppError('GAME_AUTH_REQUIRED', `${message}: ${how}`, {
      connectUrl: `${this.deps.settings.publicUrl}/game/oauth/authorize`,
    });
  }
}
