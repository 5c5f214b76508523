import { randomUUID } from 'node:crypto';
import { addSeconds, type Clock, isoNow } from '../../../../core/clock.js';
import type { OutboundHttp } from '../../../../core/http/outbound.js';
import type { SecretBox } from '../../../../core/secrets.js';
import { NodeOperationError } from '../../engine/node-type.js';
import { CREDENTIAL_WRITE_ATTEMPTS, type CredentialRow, type CredentialStore } from '../store.js';
import { type OAuth2Config, oauth2Config, sameClient } from './config.js';
import type { RenewalLease } from './renewal-lease.js';
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
  /** The cross-process guard of renewals (one per credential). */
  lease: RenewalLease;
  box: SecretBox;
  clock: Clock;
  http: OutboundHttp;
  /** Drops the account's revealed (cached) credentials: their token data changed. */
  forgetRevealed(accountId: string): void;
  /** Waits between looks at another process's renewal (real time; a test may count the waits). */
  pause?(ms: number): Promise<void>;
}

/** How long a renewal is held: the token request's 15 s and the writes around it, with margin. */
export const RENEWAL_LEASE_SECONDS = 30;
/** How long a run waits for another process's renewal before it fails (real time). */
const RENEWAL_WAIT_MS = 35_000;
const RENEWAL_POLL_MS = 100;

/** A credential as a renewal reads it. */
interface Current {
  row: CredentialRow;
  config: OAuth2Config;
  token: TokenData | null;
}

/**
 * Access tokens of OAuth2 credentials for running workflows: the stored one while it lasts; else a
 * new one (client credentials) or a refreshed one (refresh_token), stored sealed on the credential as
 * n8n's `oauthTokenData`. One renewal at a time per credential, across processes: concurrent runs of
 * this process share one promise, and other processes wait on the renewal lease and then read what
 * the holder stored (a provider that rotates refresh tokens would otherwise see the old one twice,
 * answer invalid_grant, and may revoke the grant). The token is stored by compare-and-swap, so it
 * never undoes a change of the credential made meanwhile.
 */
export class OAuth2Tokens {
  private readonly renewing = new Map<string, Promise<TokenData>>();

  constructor(private readonly deps: Deps) {}

  /**
   * The token to sign with. `renew`: the API answered the expired status with the current one, so a
   * new one is fetched even if it looks fresh (n8n refreshes on 401 and retries once).
   */
  async token(accountId: string, ref: string, renew = false): Promise<SigningToken> {
    const current = await this.read(accountId, ref);
    if (!current || !isOAuth2Type(current.row.type))
      throw new NodeOperationError(`Credential '${ref}' is not OAuth2`);
    const { row, config } = current;
    const token =
      !renew && isFresh(current.token, this.deps.clock.now())
        ? current.token
        : await this.once(row.id, () => this.renewOnce(accountId, row, current.token));
    return {
      accessToken: token.access_token,
      tokenType: typeof token.token_type === 'string' ? token.token_type.toLowerCase() : 'bearer',
      tokenExpiredStatusCode: config.tokenExpiredStatusCode,
    };
  }

  /**
   * Stores a token answer on the credential (sealed with its other fields), got with `basis`: if the
   * client or its endpoints changed since (a PATCH), the token is not the credential's any more and
   * is dropped. The write is a compare-and-swap on the sealed data, retried a few times.
   */
  async save(
    accountId: string,
    credentialId: string,
    token: TokenData,
    basis: OAuth2Config,
  ): Promise<boolean> {
    for (let attempt = 1; attempt <= CREDENTIAL_WRITE_ATTEMPTS; attempt++) {
      const row = await this.deps.store.find(accountId, credentialId);
      if (!row || row.id !== credentialId || !isOAuth2Type(row.type)) return false;
      const data = this.open(row);
      if (!sameClient(basis, oauth2Config(row.type, data).config)) return false;
      const sealed = this.deps.box.encrypt(
        JSON.stringify({ ...data, [TOKEN_DATA_FIELD]: JSON.stringify(token) }),
      );
      const saved = await this.deps.store.update(
        accountId,
        credentialId,
        { data: sealed, updated_at: isoNow(this.deps.clock) },
        row.data,
      );
      if (saved) {
        this.deps.forgetRevealed(accountId);
        return true;
      }
    }
    throw new NodeOperationError(
      `OAuth2 credential '${credentialId}': its new token could not be stored, the credential kept changing; run again`,
    );
  }

  /**
   * Renews once across processes: takes the lease, reads the credential again and renews only if no
   * one did since `seen`; while another process holds the lease, waits for its token (bounded).
   */
  private async renewOnce(
    accountId: string,
    { id, name }: CredentialRow,
    seen: TokenData | null,
  ): Promise<TokenData> {
    const { lease, clock } = this.deps;
    const holder = randomUUID();
    const pause =
      this.deps.pause ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const deadline = Date.now() + RENEWAL_WAIT_MS;
    for (;;) {
      const now = clock.now();
      if (
        await lease.take(id, holder, now.toISOString(), addSeconds(now, RENEWAL_LEASE_SECONDS).toISOString())
      ) {
        try {
          const current = await this.usable(accountId, id);
          const renewed = this.renewedSince(seen, current.token);
          if (renewed) return renewed;
          const next = await this.renew(current);
          await this.save(accountId, id, next, current.config);
          return next;
        } finally {
          await lease.release(id, holder);
        }
      }
      const renewed = this.renewedSince(seen, (await this.usable(accountId, id)).token);
      if (renewed) return renewed;
      if (Date.now() >= deadline)
        throw new NodeOperationError(
          `OAuth2 credential '${name}': another process is renewing its token and did not finish in time; run again`,
        );
      await pause(RENEWAL_POLL_MS);
    }
  }

  /** The stored token when another process renewed it since `seen` (and it is usable), else null. */
  private renewedSince(seen: TokenData | null, stored: TokenData | null): TokenData | null {
    if (!stored || stored.access_token === seen?.access_token) return null;
    return isFresh(stored, this.deps.clock.now()) ? stored : null;
  }

  private async renew({ row, config, token: current }: Current): Promise<TokenData> {
    const now = this.deps.clock.now();
    try {
      if (config.grantType === 'clientCredentials') {
        return await requestToken(
          this.deps.http,
          config,
          {
            ...config.additionalBody,
            grant_type: 'client_credentials',
            ...(config.scope ? { scope: config.scope } : {}),
          },
          now,
        );
      }
      if (current?.refresh_token) {
        const refreshed = await requestToken(
          this.deps.http,
          config,
          { grant_type: 'refresh_token', refresh_token: current.refresh_token },
          now,
        );
        return mergeRefreshed(current, refreshed);
      }
    } catch (error) {
      if (error instanceof TokenEndpointError)
        throw new NodeOperationError(`OAuth2 credential '${row.name}': ${error.message}`);
      throw error;
    }
    throw new NodeOperationError(
      current
        ? `OAuth2 credential '${row.name}': the access token expired and there is no refresh token; connect it again (POST /api/v1/credentials/${row.id}/oauth2/authorize)`
        : `OAuth2 credential '${row.name}' is not connected yet: connect it (POST /api/v1/credentials/${row.id}/oauth2/authorize)`,
    );
  }

  /** The credential by id or name, its configuration and its token; undefined when there is none. */
  private async read(accountId: string, ref: string): Promise<Current | undefined> {
    const row = await this.deps.store.find(accountId, ref);
    if (!row || !isOAuth2Type(row.type)) return undefined;
    const data = this.open(row);
    const { config, problems } = oauth2Config(row.type, data);
    if (problems.length > 0)
      throw new NodeOperationError(
        `OAuth2 credential '${row.name}' is incomplete: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      );
    return { row, config, token: readTokenData(data[TOKEN_DATA_FIELD]) };
  }

  /** As `read`, by id, for a credential a renewal started with (it may be gone since). */
  private async usable(accountId: string, id: string): Promise<Current> {
    const current = await this.read(accountId, id);
    if (!current || current.row.id !== id)
      throw new NodeOperationError(`Credential '${id}' no longer exists`);
    return current;
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
