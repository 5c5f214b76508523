import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { SecretBox } from '../../core/secrets.js';
import type { OAuthStates } from './oauth-state.js';
import { type GameSettings, requireSettings } from './settings.js';
import type { GameStore, Owner } from './store.js';
import { type TokenClient, TokenRefused } from './token-client.js';
import { tokenColumns } from './user-tokens.js';

export interface ConnectionView {
  connected: true;
  membershipId: string;
  accessExpiresAt: string;
  refreshExpiresAt: string | null;
}

export interface OAuthDeps {
  settings: GameSettings;
  store: GameStore;
  states: OAuthStates;
  tokens: TokenClient;
  box: SecretBox;
  clock: Clock;
}

const OAUTH_SETTINGS = ['apiKey', 'clientId', 'clientSecret'] as const;

/** The authorization-code flow: authorize URL with a state, callback, disconnect. */
export class GameOAuth {
  constructor(private readonly deps: OAuthDeps) {}

  /** Where to send the user's browser: the upstream authorize URL with a fresh state. */
  async authorizeUrl(owner: Owner): Promise<string> {
    const { settings, states } = this.deps;
    requireSettings(settings, OAUTH_SETTINGS);
    const url = new URL(settings.authorizeUrl);
    url.searchParams.set('client_id', settings.clientId);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('state', await states.issue(owner));
    if (settings.redirectUrl) url.searchParams.set('redirect_uri', settings.redirectUrl);
    return url.toString();
  }

  /** Exchanges the code for tokens and stores them, sealed, for the principal of the state. */
  async callback(code: string, state: string): Promise<ConnectionView> {
    const { settings, store, states, tokens, box, clock } = this.deps;
    requireSettings(settings, OAUTH_SETTINGS);
    const owner = await states.consume(state);
    let grant: Awaited<ReturnType<TokenClient['exchangeCode']>>;
    try {
      grant = await tokens.exchangeCode(code);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      throw new AppError('UPSTREAM_ERROR', 'The game platform refused the authorization code', {
        httpStatus: error.httpStatus,
        oauthError: error.oauthError,
      });
    }
    const now = clock.now();
    const columns = tokenColumns(box, grant, now);
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
    return {
      connected: true,
      membershipId: columns.membership_id,
      accessExpiresAt: columns.access_expires_at,
      refreshExpiresAt: columns.refresh_expires_at,
    };
  }

  async disconnect(owner: Owner): Promise<void> {
    await this.deps.store.deleteConnection(owner);
  }

  /** 401 GAME_AUTH_REQUIRED with the URLs to (re)connect. */
  async authRequired(owner: Owner, message: string): Promise<AppError> {
    const { settings } = this.deps;
    const details: Record<string, unknown> = { connectUrl: `${settings.publicUrl}/game/oauth/authorize` };
    if (settings.clientId && settings.clientSecret) details.authorizeUrl = await this.authorizeUrl(owner);
    return new AppError('GAME_AUTH_REQUIRED', message, details);
  }
}
