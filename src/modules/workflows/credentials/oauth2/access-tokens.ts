import { type Clock, isoNow } from '../../../../core/clock.js';
import type { OutboundHttp } from '../../../../core/http/outbound.js';
import type { SecretBox } from '../../../../core/secrets.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { CredentialRow, CredentialStore } from '../store.js';
import { type OAuth2Config, oauth2Config } from './config.js';
import {
  isFresh,
  mergeRefreshed,
  readTokenData,
  requestToken,
  type TokenData,
  TokenEndpointError,
} from './token-endpoint.js';
import { isOAuth2Type, TOKEN_DATA_FIELD } from './types.js';

/** What a request signs with (n8n's token `sign`), and the status that means "renew and retry once". */
export interface SigningToken {
  accessToken: string;
  /** The answer's token_type, lowercased; 'bearer' when absent. */
  tokenType: string;
  tokenExpiredStatusCode: number;
}

interface Deps {
  store: CredentialStore;
  box: SecretBox;
  clock: Clock;
  http: OutboundHttp;
  /** Drops the account's revealed (cached) credentials: their token data changed. */
  forgetRevealed(accountId: string): void;
}

/**
 * Access tokens of OAuth2 credentials for running workflows: the stored one while it lasts; else a
 * new one (client credentials) or a refreshed one (refresh_token), stored sealed on the credential as
 * n8n's `oauthTokenData`. One renewal at a time per credential: concurrent runs share it (a provider
 * that rotates refresh tokens would otherwise see the old one twice).
 */
export class OAuth2Tokens {
  private readonly renewing = new Map<string, Promise<TokenData>>();

  constructor(private readonly deps: Deps) {}

  /**
   * The token to sign with. `renew`: the API answered the expired status with the current one, so a
   * new one is fetched even if it looks fresh (n8n refreshes on 401 and retries once).
   */
  async token(accountId: string, ref: string, renew = false): Promise<SigningToken> {
    const row = await this.deps.store.find(accountId, ref);
    if (!row || !isOAuth2Type(row.type)) throw new NodeOperationError(`Credential '${ref}' is not OAuth2`);
    const data = this.open(row);
    const { config, problems } = oauth2Config(row.type, data);
    if (problems.length > 0)
      throw new NodeOperationError(
        `OAuth2 credential '${row.name}' is incomplete: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      );
    const current = readTokenData(data[TOKEN_DATA_FIELD]);
    const token =
      !renew && isFresh(current, this.deps.clock.now())
        ? current
        : await this.once(row.id, () => this.renew(accountId, row, config, current));
    return {
      accessToken: token.access_token,
      tokenType: typeof token.token_type === 'string' ? token.token_type.toLowerCase() : 'bearer',
      tokenExpiredStatusCode: config.tokenExpiredStatusCode,
    };
  }

  /** Stores a token answer on the credential (sealed with its other fields). */
  async save(accountId: string, credentialId: string, token: TokenData): Promise<boolean> {
    const row = await this.deps.store.find(accountId, credentialId);
    if (!row || row.id !== credentialId) return false;
    const data = { ...this.open(row), [TOKEN_DATA_FIELD]: JSON.stringify(token) };
    const saved = await this.deps.store.update(accountId, credentialId, {
      data: this.deps.box.encrypt(JSON.stringify(data)),
      updated_at: isoNow(this.deps.clock),
    });
    this.deps.forgetRevealed(accountId);
    return saved;
  }

  private async renew(
    accountId: string,
    row: CredentialRow,
    config: OAuth2Config,
    current: TokenData | null,
  ): Promise<TokenData> {
    const now = this.deps.clock.now();
    let next: TokenData;
    try {
      if (config.grantType === 'clientCredentials') {
        next = await requestToken(
          this.deps.http,
          config,
          {
            ...config.additionalBody,
            grant_type: 'client_credentials',
            ...(config.scope ? { scope: config.scope } : {}),
          },
          now,
        );
      } else if (current?.refresh_token) {
        const refreshed = await requestToken(
          this.deps.http,
          config,
          { grant_type: 'refresh_token', refresh_token: current.refresh_token },
          now,
        );
        next = mergeRefreshed(current, refreshed);
      } else {
        throw new NodeOperationError(
          current
            ? `OAuth2 credential '${row.name}': the access token expired and there is no refresh token; connect it again (POST /api/v1/credentials/${row.id}/oauth2/authorize)`
            : `OAuth2 credential '${row.name}' is not connected yet: connect it (POST /api/v1/credentials/${row.id}/oauth2/authorize)`,
        );
      }
    } catch (error) {
      if (error instanceof TokenEndpointError)
        throw new NodeOperationError(`OAuth2 credential '${row.name}': ${error.message}`);
      throw error;
    }
    await this.save(accountId, row.id, next);
    return next;
  }

  private once(id: string, work: () => Promise<TokenData>): Promise<TokenData> {
    const pending = this.renewing.get(id);
    if (pending) return pending;
    const started = work().finally(() => this.renewing.delete(id));
    this.renewing.set(id, started);
    return started;
  }

  private open(row: CredentialRow): Record<string, string> {
    return JSON.parse(this.deps.box.decrypt(row.data)) as Record<string, string>;
  }
}
