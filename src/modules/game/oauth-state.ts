import { createHmac } from 'node:crypto';
import { addSeconds, type Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { codeChallengeS256, randomSecret, sha256Base64url } from '../../core/oauth/pkce.js';
import { type SecretBox, sameSecret } from '../../core/secrets.js';
import type { GameStore, Owner } from './store.js';

/** A flow must complete within this time of the API call that started it. */
export const STATE_TTL_SECONDS = 600;

/** A flow bound to the integration's user session: the hash of that session's secret, and where to return. */
export interface SessionBinding {
  /** SHA-256 of the session's secret, lowercase hex. */
  sessionBinding: string;
  returnUrl: string;
}

/** What the browser step hands on: the signed state, the cookie nonce and the PKCE challenge. */
interface BrowserStart {
  stateId: string;
  state: string;
  nonce: string;
  codeChallenge: string;
  expiresAt: Date;
}

/**
 * The pending OAuth flows. A flow is a row written when an API caller starts it (bound to that
 * principal, with a PKCE verifier and the hash of a one-time browser ticket). The browser that
 * opens the ticket's link claims it once and gets a cookie nonce whose hash is stored; only then
 * does a state `<id>.<expiry>.<hmac>` exist. The callback must present the signed state and the
 * cookie of that browser; the row is deleted on first use, whatever the outcome.
 */
export class OAuthStates {
  constructor(
    private readonly key: Buffer,
    private readonly store: GameStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * A new flow for the principal, bound to the integration's user session when `binding` is given;
   * returns the one-time ticket of its browser link.
   */
  async issue(owner: Owner, binding?: SessionBinding): Promise<{ ticket: string; expiresAt: Date }> {
    const now = this.clock.now();
    const ticket = randomSecret();
    const expiresAt = addSeconds(now, STATE_TTL_SECONDS);
    await this.store.purgeStates(now.toISOString());
    await this.store.insertState({
      id: randomSecret().slice(0, 24),
      account_id: owner.accountId,
      customer_id: owner.customerId,
      ticket_hash: sha256Base64url(ticket),
      browser_hash: null,
      code_verifier: this.box.encrypt(randomSecret()),
      session_binding: binding?.sessionBinding ?? null,
      return_url: binding?.returnUrl ?? null,
      expires_at: expiresAt.toISOString(),
      created_at: now.toISOString(),
    });
    return { ticket, expiresAt };
  }

  /** The browser step: claims the ticket once and binds the flow to a fresh cookie nonce. */
  async claim(ticket: string): Promise<BrowserStart> {
    const nonce = randomSecret();
    const row = await this.store.claimTicket(
      sha256Base64url(ticket),
      sha256Base64url(nonce),
      this.clock.now().toISOString(),
    );
    if (!row) {
      throw invalid(
        'querystring.ticket',
        'This link is not valid, was already used or has expired; start again',
      );
    }
    const expiresAt = new Date(row.expires_at);
    const payload = `${row.id}.${Math.floor(expiresAt.getTime() / 1000)}`;
    return {
      stateId: row.id,
      state: `${payload}.${this.sign(payload)}`,
      nonce,
      codeChallenge: codeChallengeS256(this.box.decrypt(row.code_verifier)),
      expiresAt,
    };
  }

  /** The state's id when its signature and expiry hold; 400 otherwise. */
  verify(state: string): string {
    const [id, exp, signature, extra] = state.split('.');
    if (
      !id ||
      !exp ||
      !signature ||
      extra !== undefined ||
      !this.signatureMatches(`${id}.${exp}`, signature)
    ) {
      throw badState('The OAuth state is not valid');
    }
    if (Number(exp) <= this.clock.now().getTime() / 1000)
      throw badState('The OAuth state has expired; start again');
    return id;
  }

  /**
   * Uses the flow once: the principal it was started for and its PKCE verifier, when `nonce` is
   * the cookie of the browser that opened its link. 400 for a used or expired state, 403 for
   * another browser (the flow is spent either way, so a refused attempt cannot be retried).
   */
  async consume(
    stateId: string,
    nonce: string | undefined,
  ): Promise<{ owner: Owner; codeVerifier: string; binding: SessionBinding | null }> {
    const row = await this.store.consumeState(stateId);
    if (!row) throw badState('The OAuth state was already used');
    if (Date.parse(row.expires_at) <= this.clock.now().getTime()) {
      throw badState('The OAuth state has expired; start again');
    }
    if (!nonce || !row.browser_hash || !sameSecret(sha256Base64url(nonce), row.browser_hash)) {
      throw new AppError(
        'FORBIDDEN',
        'This browser did not start this connection: open the connect link in the browser that completes it',
        { reason: nonce ? 'browser_mismatch' : 'browser_cookie_missing' },
      );
    }
    return {
      owner: { accountId: row.account_id, customerId: row.customer_id },
      codeVerifier: this.box.decrypt(row.code_verifier),
      binding:
        row.session_binding && row.return_url
          ? { sessionBinding: row.session_binding, returnUrl: row.return_url }
          : null,
    };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  private signatureMatches(payload: string, signature: string): boolean {
    return sameSecret(this.sign(payload), signature);
  }
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, { fields: [{ field, message }] });
}

function badState(message: string): AppError {
  return invalid('querystring.state', message);
}
