import type { Principal } from '../../../../core/auth/principal.js';
import { addSeconds, type Clock } from '../../../../core/clock.js';
import { AppError, notFound } from '../../../../core/errors.js';
import type { OutboundHttp } from '../../../../core/http/outbound.js';
import {
  type BindingCookieScope,
  bindingCookie,
  bindingNonce,
  clearedBindingCookie,
} from '../../../../core/oauth/browser-binding.js';
import { codeChallengeS256, randomSecret, sha256Base64url } from '../../../../core/oauth/pkce.js';
import { type SecretBox, sameSecret } from '../../../../core/secrets.js';
import { NodeOperationError } from '../../engine/node-type.js';
import { actorOf, mayManage } from '../access.js';
import type { CredentialStore } from '../store.js';
import type { OAuth2Tokens } from './access-tokens.js';
import { type CallbackPage, callbackPage } from './callback-page.js';
import { type OAuth2Config, oauth2Config } from './config.js';
import type { ConsentStore } from './consent-store.js';
import { startPage } from './start-page.js';
import { requestToken, TokenEndpointError } from './token-endpoint.js';
import { isOAuth2Type } from './types.js';

/** A consent must complete within this time of the API call that started it. */
export const CONSENT_TTL_SECONDS = 600;
/** Pending consents one account may hold at once (each is a row until it expires). */
export const MAX_PENDING_CONSENTS = 100;
/** The routes the browser visits, under PUBLIC_URL. */
export const CONSENT_START_PATH = '/oauth2-credential/start';
export const CONSENT_CALLBACK_PATH = '/oauth2-credential/callback';
const COOKIE_PREFIX = 'cred_oauth_';
/** Query parameters of the authorize URL the credential's authQueryParameters may not replace. */
const FLOW_PARAMETERS = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
]);

interface Deps {
  credentials: CredentialStore;
  consents: ConsentStore;
  tokens: OAuth2Tokens;
  box: SecretBox;
  clock: Clock;
  http: OutboundHttp;
  publicUrl: string;
  /** The account's name, for the confirmation page (null: unknown, its id is shown). */
  accountName?(accountId: string): Promise<string | null>;
}

/** What opening the link answers: the provider (with the binding cookie), or the confirmation first. */
export type StartStep =
  | { kind: 'redirect'; location: string; cookie: string }
  | { kind: 'confirm'; page: { html: string; headers: Record<string, string> } };

/** The actor of a flow asked for with a member's session. */
const MEMBER_PREFIX = 'member:';

/**
 * n8n's authorization-code consent (with PKCE for grant type pkce), in three steps as the game's
 * integration does it: (1) a principal who may change the credential asks for a link; (2) the
 * browser that opens the link (the asking member's, or after a confirmation naming the account and
 * provider) gets a cookie binding the flow to it and is sent to the provider with a state; (3) the
 * provider sends that browser to the callback, which needs the state (single use, expiring, its
 * secret matched by hash) and that browser's cookie, exchanges the code through the outbound guard
 * and seals the tokens on the credential.
 */
export class CredentialConsent {
  constructor(private readonly deps: Deps) {}

  /** PUBLIC_URL's origin: the confirmation page's form must come from it (or from the Host). */
  get publicOrigin(): string {
    return new URL(this.deps.publicUrl).origin;
  }

  /** The callback URL to register at the provider (the redirect_uri sent). */
  get callbackUrl(): string {
    return `${this.deps.publicUrl}${CONSENT_CALLBACK_PATH}`;
  }

  /** Step 1 (API): a one-time link for the browser, valid 10 minutes. */
  async start(accountId: string, id: string, principal: Principal | null) {
    const { credentials, consents, box, clock } = this.deps;
    const row = await credentials.find(accountId, id);
    if (!row || row.id !== id) throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    if (!mayManage(principal, row.owner))
      throw new AppError(
        'FORBIDDEN',
        `Credential '${id}' belongs to ${row.owner}: only its owner or a key with credentials:use may connect it`,
        { id, owner: row.owner },
      );
    if (!isOAuth2Type(row.type))
      throw invalid('params.id', `Credential '${id}' is of type ${row.type}, not an OAuth2 type`);
    const { config, problems } = oauth2Config(
      row.type,
      JSON.parse(box.decrypt(row.data)) as Record<string, string>,
    );
    if (problems.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Incomplete OAuth2 credential', { fields: problems });
    if (config.grantType === 'clientCredentials')
      throw invalid(
        'params.id',
        'A client-credentials credential needs no consent: its token is fetched when a workflow first uses it',
      );
    const now = clock.now();
    await consents.purge(now.toISOString());
    const ticket = randomSecret();
    const expiresAt = addSeconds(now, CONSENT_TTL_SECONDS);
    const made = await consents.insertUnder(
      {
        id: randomSecret().slice(0, 24),
        account_id: accountId,
        credential_id: row.id,
        actor: actorOf(principal),
        ticket_hash: sha256Base64url(ticket),
        browser_hash: null,
        state_hash: null,
        code_verifier: box.encrypt(randomSecret()),
        expires_at: expiresAt.toISOString(),
        created_at: now.toISOString(),
      },
      MAX_PENDING_CONSENTS,
      now.toISOString(),
    );
    if (!made)
      throw new AppError(
        'RATE_LIMIT_EXCEEDED',
        `At most ${MAX_PENDING_CONSENTS} pending OAuth2 consents per account`,
      );
    const link = new URL(`${this.deps.publicUrl}${CONSENT_START_PATH}`);
    link.searchParams.set('ticket', ticket);
    return {
      authorizeUrl: link.toString(),
      expiresAt: expiresAt.toISOString(),
      callbackUrl: this.callbackUrl,
    };
  }

  /**
   * Step 2 (browser), bound to who asked for the link. Asked with a member's session: only that
   * member's signed-in browser may open it (403 otherwise, nothing spent). Asked with an API key (or
   * by the operator): a first look answers a confirmation page naming the account, the credential
   * and the provider's host; `confirmed` (its POST) goes on. Going on binds the flow to this browser
   * (cookie) and redirects to the provider.
   */
  async browserStart(
    ticket: string,
    https: boolean,
    requester: Principal | null,
    confirmed: boolean,
  ): Promise<StartStep> {
    const { consents, clock } = this.deps;
    const now = clock.now();
    const flow = await consents.byTicket(sha256Base64url(ticket), now.toISOString());
    if (!flow) throw spentLink();
    const { credential, config } = await this.flowCredential(flow.account_id, flow.credential_id);
    if (flow.actor.startsWith(MEMBER_PREFIX)) {
      if (
        requester?.kind !== 'session' ||
        requester.accountId !== flow.account_id ||
        actorOf(requester) !== flow.actor
      )
        throw new AppError(
          'FORBIDDEN',
          'This link belongs to the signed-in member who asked for it: open it in their signed-in browser',
        );
    } else if (!confirmed) {
      const authorize = new URL(config.authUrl);
      return {
        kind: 'confirm',
        page: startPage({
          account: (await this.deps.accountName?.(flow.account_id)) ?? flow.account_id,
          credential: credential.name,
          host: authorize.host,
          providerOrigin: authorize.origin,
          ticket,
          action: `${new URL(this.deps.publicUrl).pathname.replace(/\/+$/, '')}${CONSENT_START_PATH}`,
        }),
      };
    }
    return this.toProvider(ticket, https, config);
  }

  /** Claims the ticket (once) for this browser and answers the provider's authorize URL. */
  private async toProvider(ticket: string, https: boolean, config: OAuth2Config): Promise<StartStep> {
    const { consents, box, clock } = this.deps;
    const nonce = randomSecret();
    const secret = randomSecret();
    const now = clock.now();
    const row = await consents.claim(
      sha256Base64url(ticket),
      sha256Base64url(nonce),
      sha256Base64url(secret),
      now.toISOString(),
    );
    if (!row) throw spentLink();
    const url = new URL(config.authUrl);
    for (const [k, v] of new URLSearchParams(config.authQueryParameters))
      if (!FLOW_PARAMETERS.has(k)) url.searchParams.set(k, v);
    url.searchParams.set('client_id', config.clientId);
    url.searchParams.set('redirect_uri', this.callbackUrl);
    url.searchParams.set('response_type', 'code');
    if (config.scope) url.searchParams.set('scope', config.scope.replace(/,/g, ' '));
    url.searchParams.set('state', `${row.id}.${secret}`);
    if (config.grantType === 'pkce') {
      url.searchParams.set('code_challenge', codeChallengeS256(box.decrypt(row.code_verifier)));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    const maxAge = (Date.parse(row.expires_at) - now.getTime()) / 1000;
    return {
      kind: 'redirect',
      location: url.toString(),
      cookie: bindingCookie(row.id, nonce, maxAge, this.cookieScope(https)),
    };
  }

  /** The credential a flow connects, with its configuration as it is now (it must still be usable). */
  private async flowCredential(accountId: string, id: string) {
    const credential = await this.deps.credentials.find(accountId, id);
    if (!credential || credential.id !== id || !isOAuth2Type(credential.type))
      throw notFound('CREDENTIAL_NOT_FOUND', 'Credential', id);
    const { config, problems } = oauth2Config(
      credential.type,
      JSON.parse(this.deps.box.decrypt(credential.data)) as Record<string, string>,
    );
    if (problems.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Incomplete OAuth2 credential', { fields: problems });
    return { credential, config };
  }

  /** The Set-Cookie that removes the flow's cookie once the callback is reached (null if unnamed). */
  clearCookie(state: string | undefined, https: boolean): string | null {
    return clearedBindingCookie((state ?? '').split('.')[0] ?? '', this.cookieScope(https));
  }

  /**
   * Step 3 (browser): the page saying connected or failed. A state whose secret is wrong matches no
   * flow and spends nothing (whoever saw the flow id cannot cancel it); with the right secret, every
   * failure spends the flow.
   */
  async callback(
    query: { code?: string; state?: string; error?: string },
    cookieHeader: string | undefined,
  ): Promise<CallbackPage> {
    const { consents, box, clock, credentials } = this.deps;
    const [id, secret, extra] = (query.state ?? '').split('.');
    if (!id || !secret || extra !== undefined)
      return callbackPage(false, 'The OAuth state is missing or malformed; start again.');
    // Matched on the secret's hash in the delete itself: a wrong secret spends nothing.
    const row = await consents.consume(id, sha256Base64url(secret));
    if (!row) return callbackPage(false, 'This OAuth state is not valid or was already used; start again.');
    const now = clock.now();
    if (Date.parse(row.expires_at) <= now.getTime())
      return callbackPage(false, 'This OAuth state has expired; start again.');
    const nonce = bindingNonce(cookieHeader, id, COOKIE_PREFIX);
    if (!nonce || !row.browser_hash || !sameSecret(sha256Base64url(nonce), row.browser_hash))
      return callbackPage(
        false,
        'This browser did not start this connection: open the connect link in the browser that completes it.',
        403,
      );
    if (query.error !== undefined || !query.code)
      return callbackPage(
        false,
        `The provider did not grant access${query.error ? ` (${safeCode(query.error)})` : ''}.`,
      );
    const credential = await credentials.find(row.account_id, row.credential_id);
    if (!credential || credential.id !== row.credential_id || !isOAuth2Type(credential.type))
      return callbackPage(false, 'The credential no longer exists.', 404);
    const { config } = oauth2Config(
      credential.type,
      JSON.parse(box.decrypt(credential.data)) as Record<string, string>,
    );
    try {
      const token = await requestToken(
        this.deps.http,
        config,
        {
          grant_type: 'authorization_code',
          code: query.code,
          redirect_uri: this.callbackUrl,
          ...(config.grantType === 'pkce' ? { code_verifier: box.decrypt(row.code_verifier) } : {}),
        },
        now,
      );
      if (!(await this.deps.tokens.save(row.account_id, row.credential_id, token, config)))
        return callbackPage(false, 'The credential changed during the connection; start again.', 409);
    } catch (error) {
      if (error instanceof NodeOperationError) return callbackPage(false, error.message, 409);
      if (!(error instanceof TokenEndpointError)) throw error;
      return callbackPage(false, error.message, 502);
    }
    return callbackPage(true, `Credential '${credential.name}' is connected.`);
  }

  /** Secure when the platform is public over https or this request came over https. */
  private cookieScope(https: boolean): BindingCookieScope {
    const base = new URL(this.deps.publicUrl);
    return {
      path: `${base.pathname.replace(/\/+$/, '')}${CONSENT_CALLBACK_PATH}`,
      secure: https || base.protocol === 'https:',
      prefix: COOKIE_PREFIX,
    };
  }
}

/** An OAuth error code as RFC 6749 spells them; anything else is not echoed. */
function safeCode(code: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'error';
}

function spentLink(): AppError {
  return invalid(
    'querystring.ticket',
    'This link is not valid, was already used or has expired; start again',
  );
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, { fields: [{ field, message }] });
}
